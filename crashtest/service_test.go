package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/freeport"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// target is what the load runs against and the check reads: assent dev
// (service) or the production cluster (clusterTarget).
type target interface {
	// url is path at the address agents and people use.
	url(path string) string
	// keys are the organisation's keys and people.
	keys() bootstrap
	// databaseURL is the application database.
	databaseURL() string
	// temporal is how to reach its Temporal namespace, and the key ring
	// its payloads are sealed with.
	temporal() (client.Options, *secretkey.Ring, error)
}

// service is `assent dev` as a child process on a data directory that
// outlives each run, so a restart finds what the killed run left.
type service struct {
	t        *testing.T
	bin      string
	dataDir  string
	httpPort int
	tempPort int
	logFile  *os.File
	cmd      *exec.Cmd
	exited   chan struct{}
	boot     bootstrap
}

// bootstrap is the part of <data dir>/bootstrap.json the load needs.
type bootstrap struct {
	AgentKey string `json:"agentKey"`
	AdminKey string `json:"adminKey"`
	Members  []struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Role  string `json:"role"`
		Token string `json:"token"`
	} `json:"members"`
}

// The service runs this checkout's binary, assentbin.For.
func TestMain(m *testing.M) { assentbin.Main(m) }

func newService(t *testing.T, bin string) *service {
	dir := t.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "assent.log"))
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	s := &service{t: t, bin: bin, dataDir: filepath.Join(dir, "data"), httpPort: freePort(t), tempPort: freePort(t), logFile: logFile}
	t.Cleanup(func() { s.kill() })
	return s
}

func (s *service) url(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", s.httpPort, path)
}

func (s *service) keys() bootstrap { return s.boot }

func (s *service) temporal() (client.Options, *secretkey.Ring, error) {
	keys, err := secretkey.LoadOrCreate(filepath.Join(s.dataDir, config.SecretKeyFile))
	return client.Options{HostPort: fmt.Sprintf("127.0.0.1:%d", s.tempPort)}, keys, err
}

// start runs the service and waits until it answers and has written its
// bootstrap record.
func (s *service) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "dev")
	cmd.Env = append(os.Environ(),
		"ASSENT_DATA_DIR="+s.dataDir,
		"ASSENT_HTTP_ADDR=127.0.0.1:"+strconv.Itoa(s.httpPort),
		"ASSENT_TEMPORAL_PORT="+strconv.Itoa(s.tempPort),
		"ASSENT_TEMPORAL_UI_PORT=-1",
		"ASSENT_DEV_ALLOW_LOOPBACK=1",
		"ASSENT_DEV_RETRY_UNIT=200ms",
		"ASSENT_LOG_LEVEL=warn",
	)
	cmd.Stdout, cmd.Stderr = s.logFile, s.logFile
	// Its own process group, so the kill takes every child with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(s.t, cmd.Start())
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.exited)

	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			s.t.Fatalf("assent dev exited while starting; its log ends:\n%s", s.logTail())
		default:
		}
		if resp, err := http.Get(s.url("/readyz")); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				b, err := os.ReadFile(filepath.Join(s.dataDir, "bootstrap.json"))
				if err == nil && json.Unmarshal(b, &s.boot) == nil && s.boot.AgentKey != "" {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("assent dev did not become ready in 2 minutes; its log ends:\n%s", s.logTail())
}

// kill sends SIGKILL to the whole process group and waits for the exit.
func (s *service) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.t.Errorf("assent dev did not exit after SIGKILL")
	}
	s.cmd = nil
}

// stop ends the last run gracefully.
func (s *service) stop() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.kill()
	}
	s.cmd = nil
}

// freePort picks a port below the ephemeral range, so no outgoing
// connection takes it between a kill and the restart on the same port.
func freePort(t *testing.T) int {
	port, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	return port
}

// waitUntil polls cond every 200 ms until it holds or ctx ends.
func waitUntil(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logTail is the end of the service's log, for a failure message: the
// test's folder, and the log with it, is gone once the test ends.
func (s *service) logTail() string {
	b, err := os.ReadFile(s.logFile.Name())
	if err != nil {
		return err.Error()
	}
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
