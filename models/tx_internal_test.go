package models

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

// TestAStatementBesideItsTransactionIsRefused: inside Tx, a read or write
// on the pool rather than in the transaction the context carries fails at
// once (on SQLite it would wait behind the writers queued for the
// transaction's connection); in it, and outside Tx, it runs.
func TestAStatementBesideItsTransactionIsRefused(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "tx.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = Close(db) })
	require.NoError(t, db.Exec("CREATE TABLE notes (id integer primary key, body text)").Error)
	s := &core{db: db}
	ctx := context.Background()
	type note struct {
		ID   int
		Body string
	}
	err = s.Tx(ctx, func(ctx context.Context) error {
		var n int64
		assert.NoError(t, s.conn(ctx).Table("notes").Create(&note{ID: 1, Body: "in"}).Error)
		assert.NoError(t, s.conn(ctx).Table("notes").Count(&n).Error)
		for name, err := range map[string]error{
			"read":  s.db.WithContext(ctx).Table("notes").Count(&n).Error,
			"write": s.db.WithContext(ctx).Table("notes").Create(&note{ID: 2, Body: "beside"}).Error,
			"raw":   s.db.WithContext(ctx).Raw("SELECT 1").Scan(&n).Error,
			"exec":  s.db.WithContext(ctx).Exec("DELETE FROM notes").Error,
		} {
			assert.True(t, apperr.Is(err, apperr.Internal), "%s: %v", name, err)
		}
		return nil
	})
	require.NoError(t, err)
	var n int64
	require.NoError(t, s.db.WithContext(ctx).Table("notes").Count(&n).Error)
	assert.EqualValues(t, 1, n, "only the write in the transaction ran")
}
