package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startProxy runs the proxy over backends and returns its address once it
// accepts connections.
func startProxy(t *testing.T, backends ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = runProxy(ctx, listen, backends) }()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return listen
}

// TestProxyRetriesAReadWhoseConnectionBroke: a serve stopping for a
// deploy passes its health check yet drops a connection mid-request; a
// GET is sent to the other backend instead of answering 502.
func TestProxyRetriesAReadWhoseConnectionBroke(t *testing.T) {
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "alive")
	}))
	defer alive.Close()
	var dropped atomic.Int32
	stopping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			return
		}
		dropped.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer stopping.Close()
	listen := startProxy(t, stopping.URL, alive.URL)

	for i := range 6 {
		resp, err := http.Get("http://" + listen + "/api/v1/approvals/x")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, b)
		assert.Equal(t, "alive", string(b), "request %d", i)
	}
	assert.Positive(t, dropped.Load(), "some reads went to the stopping backend first")
}

// TestProxySkipsARefusingBackend: a serve killed between two health checks
// refuses connections; every request, a POST included, reaches the other.
func TestProxySkipsARefusingBackend(t *testing.T) {
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, _ = io.WriteString(w, r.Method+" "+r.Host+" "+string(body))
	}))
	defer alive.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()

	listen := startProxy(t, deadURL, alive.URL)

	for i := range 6 { // both turns of the rotation, before and after the health check
		resp, err := http.Post("http://"+listen+"/x", "text/plain", strings.NewReader("body"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, b)
		assert.Equal(t, "POST "+listen+" body", string(b), "request %d", i)
	}
}

func TestPortsFlag(t *testing.T) {
	var p portsFlag
	require.NoError(t, p.Set("proxy=8443, temporal-ui=8233"))
	require.NoError(t, p.Set("postgres=15432"))
	assert.Equal(t, portsFlag{"proxy": 8443, "temporal-ui": 8233, "postgres": 15432}, p)
	assert.ErrorContains(t, p.Set("proxy"), "want name=port")
	assert.ErrorContains(t, p.Set("proxy=99999"), "want name=port")
	assert.ErrorContains(t, p.Set("api=8080"), "no process api")
}

// backup and restore say what they need before touching anything; the
// drill itself runs in crashtest's TestClusterCrashSafety.
func TestBackupAndRestoreCommandsNeedTheirFolders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--dir", dir}, "--to is required"},
		{[]string{"backup", "--dir", dir, "--to", dir + "/b"}, "holds no cluster"},
		{[]string{"restore", "--dir", dir + "/r", "--from", dir}, "--from and --keys-from are required"},
		{[]string{"restore", "--dir", dir + "/r", "--from", dir, "--keys-from", dir}, "holds no secret key"},
	} {
		err := run(ctx, c.args, io.Discard, io.Discard)
		assert.ErrorContains(t, err, c.want, "%v", c.args)
	}
	assert.NoDirExists(t, dir+"/b")
	assert.NoDirExists(t, dir+"/r")
}

// TestProxyResendsAKeyedRequestWhoseKeptAliveConnectionClosed: a serve of
// 0.1.0, stopped for an upgrade, closes its listener and its kept-alive
// connections at once; a POST the proxy had just written on one of them
// gets no answer. One carrying an Idempotency-Key, which the API answers
// with its first outcome however often it comes, is sent again, to the
// other backend; one without a key is not, and answers 502.
func TestProxyResendsAKeyedRequestWhoseKeptAliveConnectionClosed(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, r.Method+" "+string(body))
		}))
		defer alive.Close()
		var stopping *httptest.Server
		var posted atomic.Int32
		stopping = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				return // the health check, and the read that leaves a kept-alive connection
			}
			posted.Add(1)
			// Stopped as the POST arrives: no new connections, and this
			// one closed without an answer.
			_ = stopping.Listener.Close()
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
		}))
		defer stopping.Close()
		listen := startProxy(t, stopping.URL, alive.URL)

		// The rotation alternates from the second backend: the second of
		// three reads reaches the stopping one and leaves its connection
		// in the proxy's pool, which the POST, fourth, then takes.
		for range 3 {
			resp, err := http.Get("http://" + listen + "/api/v1/approvals/x")
			require.NoError(t, err)
			resp.Body.Close()
		}
		req, err := http.NewRequest(http.MethodPost, "http://"+listen+"/api/v1/approvals", strings.NewReader(`{"title":"t"}`))
		require.NoError(t, err)
		if keyed {
			req.Header.Set("Idempotency-Key", "k-1")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.EqualValues(t, 1, posted.Load(), "the POST reached the stopping backend first")
		if keyed {
			assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
			assert.Equal(t, `POST {"title":"t"}`, string(b), "the whole body, to the other backend")
		} else {
			assert.Equal(t, http.StatusBadGateway, resp.StatusCode, "without a key the proxy may not send it again: %s", b)
		}
	}
}
