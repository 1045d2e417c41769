package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// noisy matches a log line at WARN or ERROR.
var noisy = regexp.MustCompile(`"level":"(WARN|ERROR)"`)

// takePort holds a free port on 127.0.0.1 until the test ends.
func takePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:"+freePort(t))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// A port already taken is reported with the setting that moves it, before
// the embedded Temporal server starts, with nothing else logged.
func TestTakenPortNamesItsSetting(t *testing.T) {
	t.Parallel()
	taken := takePort(t)
	_, takenPort, _ := net.SplitHostPort(taken)
	free := func() string { return freePort(t) }
	for _, c := range []struct {
		name    string
		args    []string
		setting string
	}{
		{"dev http", []string{"dev", "--http-addr", taken, "--temporal-port", free(), "--temporal-ui-port", free()}, "ASSENT_HTTP_ADDR or --http-addr"},
		{"dev temporal", []string{"dev", "--http-addr", "127.0.0.1:0", "--temporal-port", takenPort, "--temporal-ui-port", free()}, "ASSENT_TEMPORAL_PORT or --temporal-port"},
		{"dev ui", []string{"dev", "--http-addr", "127.0.0.1:0", "--temporal-port", free(), "--temporal-ui-port", takenPort}, "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port"},
		{"temporal ui", []string{"temporal", "--temporal-port", free(), "--temporal-ui-port", takenPort}, "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port"},
		// serve needs a database and Temporal, but the port comes first.
		{"serve http", []string{"serve", "--http-addr", taken}, "ASSENT_HTTP_ADDR or --http-addr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dataDir := t.TempDir()
			var stderr testenv.Buffer
			err := run(context.Background(), append(c.args, "--data-dir", dataDir), &testenv.Buffer{}, &stderr)
			require.Error(t, err)
			assert.Equal(t, taken+" is in use by another program (is assent already running?); choose another port with "+c.setting, err.Error())
			assert.NotRegexp(t, noisy, stderr.String())
			_, statErr := os.Stat(filepath.Join(dataDir, "temporal.db"))
			assert.ErrorIs(t, statErr, os.ErrNotExist, "the Temporal server never started")
		})
	}
}

// Every taken port is named at once, each with its setting, before
// anything starts.
func TestEveryTakenPortIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	httpAddr, temporalAddr, uiAddr := takePort(t), takePort(t), takePort(t)
	_, temporalPort, _ := net.SplitHostPort(temporalAddr)
	_, uiPort, _ := net.SplitHostPort(uiAddr)
	line := func(addr, setting string) string {
		return addr + " is in use by another program (is assent already running?); choose another port with " + setting
	}
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"dev", []string{"dev", "--http-addr", httpAddr, "--temporal-port", temporalPort, "--temporal-ui-port", uiPort}, []string{
			line(httpAddr, "ASSENT_HTTP_ADDR or --http-addr"),
			line(temporalAddr, "ASSENT_TEMPORAL_PORT or --temporal-port"),
			line(uiAddr, "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port")}},
		{"temporal", []string{"temporal", "--temporal-port", temporalPort, "--temporal-ui-port", uiPort}, []string{
			line(temporalAddr, "ASSENT_TEMPORAL_PORT or --temporal-port"),
			line(uiAddr, "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dataDir := t.TempDir()
			var stderr testenv.Buffer
			err := run(context.Background(), append(c.args, "--data-dir", dataDir), &testenv.Buffer{}, &stderr)
			require.Error(t, err)
			assert.Equal(t, strings.Join(c.want, "\n"), err.Error())
			assert.NotRegexp(t, noisy, stderr.String())
			entries, _ := os.ReadDir(dataDir)
			assert.Empty(t, entries, "nothing started, nothing written")
		})
	}
}

// TestDevStartsAndStopsQuietly runs the binary as a person would: the
// banner states the dev delivery settings, a second `assent dev` on the
// same ports exits 1 with one line naming the setting, and Ctrl-C stops
// the first cleanly, with no warning or error logged.
func TestDevStartsAndStopsQuietly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := assentbin.For(t)
	httpAddr, temporalPort := "127.0.0.1:"+freePort(t), freePort(t)
	args := []string{"dev", "--data-dir", t.TempDir(), "--http-addr", httpAddr, "--temporal-port", temporalPort, "--temporal-ui-port", freePort(t)}
	p := start(t, bin, []string{"ASSENT_DEV_ALLOW_LOOPBACK=1", "ASSENT_DEV_RETRY_UNIT=1s"}, args...)
	require.Eventually(t, func() bool { return apiLine.MatchString(p.out.String()) }, 120*time.Second, 100*time.Millisecond,
		"assent dev did not start; output:\n%s", p.out.String())
	banner := p.out.String()
	assert.Regexp(t, `Loopback receivers\s+on: `, banner)
	assert.Regexp(t, `Short retries\s+on: .* 1s`, banner)

	// Some work for the worker, so its pollers are busy when it stops.
	boot, err := loadBootstrap(args[2])
	require.NoError(t, err)
	var created map[string]any
	require.Equal(t, 201, postJSON(t, "http://"+httpAddr+"/api/v1/approvals", boot.AgentKey, `{"title":"Stop quietly"}`, &created))

	second := start(t, bin, nil, "dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--temporal-port", temporalPort, "--temporal-ui-port", "-1")
	select {
	case err := <-second.done:
		var exit interface{ ExitCode() int }
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 1, exit.ExitCode())
	case <-time.After(30 * time.Second):
		t.Fatal("a second assent dev on a taken port did not exit")
	}
	assert.Equal(t, "assent: 127.0.0.1:"+temporalPort+" is in use by another program (is assent already running?); choose another port with ASSENT_TEMPORAL_PORT or --temporal-port\n",
		second.out.String())

	time.Sleep(2 * time.Second) // let the pollers settle into long polls
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-p.done:
		require.NoError(t, err, "assent dev exited uncleanly; output:\n%s", p.out.String())
	case <-time.After(30 * time.Second):
		t.Fatal("assent dev did not stop on SIGINT")
	}
	var lines []string
	for _, l := range strings.Split(p.out.String(), "\n") {
		if noisy.MatchString(l) {
			lines = append(lines, l)
		}
	}
	assert.Empty(t, lines, "a clean stop logs no warnings or errors")
}

// A stopping serve says so at once (its readiness fails) and keeps taking
// requests for stopDelay, so a load balancer stops sending it any before
// its listener closes.
func TestLameDuckFailsReadinessThenStops(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(context.Background())
	var stoppingAt time.Time
	marked := make(chan struct{})
	serving := lameDuck(ctx, func() { stoppingAt = time.Now(); close(marked) })
	select {
	case <-serving.Done():
		t.Fatal("ended before the process began to stop")
	case <-time.After(20 * time.Millisecond):
	}
	stop()
	<-marked
	select {
	case <-serving.Done():
		t.Fatal("stopped serving with readiness just failed")
	case <-time.After(stopDelay / 2):
	}
	<-serving.Done()
	assert.GreaterOrEqual(t, time.Since(stoppingAt), stopDelay)
}
