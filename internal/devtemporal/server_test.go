package devtemporal

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"path/filepath"
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
