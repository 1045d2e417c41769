package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	listen := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = runProxy(ctx, listen, []string{deadURL, alive.URL}) }()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", listen)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	for i := range 6 { // both turns of the rotation, before and after the health check
		resp, err := http.Post("http://"+listen+"/x", "text/plain", strings.NewReader("body"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "request %d: %s", i, b)
		assert.Equal(t, "POST "+listen+" body", string(b), "request %d", i)
	}
}
