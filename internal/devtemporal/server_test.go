package devtemporal

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// The server's SQLite file must be in WAL mode: with a rollback journal
// every Temporal write waits on a full fsync, which halved throughput.
func TestServerFileUsesWAL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "temporal.db")
	srv, err := Start(context.Background(), Options{Namespace: "default", UIPort: -1, DatabaseFile: file,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: srv.FrontendAddress(), Namespace: "default"})
	require.NoError(t, err)
	c.Close()
	// Read only after the server stops: this second SQLite library does not
	// share the server's file locks, and closing its file would drop them
	// (POSIX locks are per process), letting a WAL index be truncated under
	// the server. That crashed a full test run with SIGBUS.
	srv.Stop()

	db, err := sql.Open("sqlite3", "file:"+file+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
}

// The UI only reads unless asked to write: its settings say so, and the
// UI server refuses a terminate.
func TestUIWriteActionsAreOffUnlessAsked(t *testing.T) {
	for _, writes := range []bool{false, true} {
		srv, err := Start(context.Background(), Options{Namespace: "default", UIWriteActions: writes, DatabaseFile: filepath.Join(t.TempDir(), "temporal.db"),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		resp, err := http.Get("http://" + srv.UIAddress() + "/api/v1/settings")
		require.NoError(t, err)
		var settings struct{ DisableWriteActions bool }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
		resp.Body.Close()
		assert.Equal(t, !writes, settings.DisableWriteActions, "writes %v", writes)
		// An Authorization header skips the UI's CSRF check, so the answer
		// is the write switch's.
		req, err := http.NewRequest("POST", "http://"+srv.UIAddress()+"/api/v1/namespaces/default/workflows/w/terminate", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer x")
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, !writes, resp.StatusCode == http.StatusMethodNotAllowed, "writes %v: %d", writes, resp.StatusCode)
		srv.Stop()
	}
}
