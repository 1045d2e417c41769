package apperr

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

// A transient condition of the workflow service, however wrapped, is
// service_unavailable (503); any other error stays what it was.
func TestTransientTemporalConditionsAreUnavailable(t *testing.T) {
	for _, err := range []error{
		serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to Workflow Task in failed state."),
		serviceerror.NewUnavailable("connection refused"),
		serviceerror.NewResourceExhausted(0, "namespace rate limit exceeded"),
		serviceerror.NewDeadlineExceeded("context deadline exceeded"),
		fmt.Errorf("update workflow: %w", serviceerror.NewWorkflowNotReady("Workflow Task in failed state")),
	} {
		e, ok := As(err)
		if assert.True(t, ok, "%v", err) {
			assert.Equal(t, Unavailable, e.Code, "%v", err)
			assert.Equal(t, http.StatusServiceUnavailable, e.Status())
			assert.NotContains(t, e.Message, "Workflow Task", "Temporal's wording stays in the log")
		}
	}
	for _, err := range []error{
		errors.New("boom"),
		serviceerror.NewInternal("server bug"),
		serviceerror.NewNotFound("workflow not found"),
		serviceerror.NewInvalidArgument("bad"),
	} {
		_, ok := As(err)
		assert.False(t, ok, "%v", err)
	}
	// An Error in the chain wins.
	e, ok := As(fmt.Errorf("%w: %w", New(Conflict, "taken"), serviceerror.NewUnavailable("x")))
	assert.True(t, ok)
	assert.Equal(t, Conflict, e.Code)
	e, ok = As(fmt.Errorf("%w: %w", New(NotFound, "gone"), &pgconn.PgError{Code: "57P01"}))
	assert.True(t, ok)
	assert.Equal(t, NotFound, e.Code)
}

// The database unreachable, restarting or cutting a connection is
// service_unavailable too; its other errors (a constraint, a bad query)
// stay what they were.
func TestTransientDatabaseConditionsAreUnavailable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, refused := pgx.Connect(ctx, "postgres://postgres@"+addr+"/test?connect_timeout=2")
	for _, err := range []error{
		refused,         // nothing listens: the server is down
		sqliteLocked(t), // another writer held the file past the busy timeout
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		// a statement prepared before a migration added a column it reads
		&pgconn.PgError{Code: "0A000", Message: "cached plan must not change result type"},
		fmt.Errorf("save: %w", &pgconn.PgError{Code: "08006"}),
		fmt.Errorf("read: %w", io.ErrUnexpectedEOF),
		driver.ErrBadConn,
	} {
		e, ok := As(err)
		if assert.True(t, ok, "%v", err) {
			assert.Equal(t, Unavailable, e.Code, "%v", err)
		}
	}
	for _, err := range []error{
		&pgconn.PgError{Code: "23505", Message: "duplicate key value violates unique constraint"},
		&pgconn.PgError{Code: "42P01", Message: "relation does not exist"},
		&pgconn.PgError{Code: "0A000", Message: "cannot use subquery in check constraint"},
	} {
		_, ok := As(err)
		assert.False(t, ok, "%v", err)
	}
}

// sqliteLocked is the error of a write to a SQLite file whose lock another
// connection holds past the busy timeout.
func sqliteLocked(t *testing.T) error {
	file := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite3", "file:"+file+"?_txlock=immediate")
	require.NoError(t, err)
	defer holder.Close()
	_, err = holder.Exec("CREATE TABLE t (v int)")
	require.NoError(t, err)
	tx, err := holder.Begin()
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec("INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	waiter, err := sql.Open("sqlite3", "file:"+file+"?_busy_timeout=1")
	require.NoError(t, err)
	defer waiter.Close()
	_, err = waiter.Exec("INSERT INTO t VALUES (2)")
	require.Error(t, err)
	return fmt.Errorf("insert: %w", err)
}
