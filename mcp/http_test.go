package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/keycheck"
)

// A tool call over HTTP reads its key once: the transport's check and the
// tool's API calls (list_my_requests makes three) share one answer.
func TestAToolCallChecksItsKeyOnce(t *testing.T) {
	var checks, calls atomic.Int32
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// What the API's authentication does with the key.
		_, _ = keycheck.Do(r.Context(), bearer(r.Header), func() (string, error) {
			checks.Add(1)
			return "actor", nil
		})
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/me" {
			_, _ = w.Write([]byte(`{}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[],"hasMore":false}`))
	})
	srv := httptest.NewServer(Handler(HTTPOptions{API: api, BaseURL: "http://assent.test", Version: "test"}))
	defer srv.Close()

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_my_requests","arguments":{}}}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+Path, strings.NewReader(call))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer ak_test")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), `"result"`, "the tool answered")

	require.Equal(t, int32(4), calls.Load(), "the key's check and one list for each kind reached the API")
	require.Equal(t, int32(1), checks.Load(), "the key was read once")
}
