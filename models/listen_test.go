package models_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestChangesReachOtherProcesses: on PostgreSQL a change one store (one
// process) makes reaches another's watchers through Listen, once, and the
// other's own Heard signals are not relayed back; on SQLite Listen returns
// at once and the watchers poll instead.
func TestChangesReachOtherProcesses(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		maker, waiter := models.NewStore(db, testenv.Keys()), models.NewStore(db, testenv.Keys())
		var mu sync.Mutex
		heard := map[string]int{}
		waiter.Changes().Watch(func(id string) { mu.Lock(); heard[id]++; mu.Unlock() })
		count := func(id string) int { mu.Lock(); defer mu.Unlock(); return heard[id] }

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { waiter.Listen(ctx, slog.New(slog.DiscardHandler)); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		if db.Dialector.Name() != "postgres" {
			select {
			case <-done:
			case <-time.After(time.Second):
				t.Fatal("Listen on SQLite should return at once")
			}
			maker.Changes().Changed("apr_sqlite")
			assert.Zero(t, count("apr_sqlite"), "SQLite relays nothing")
			return
		}

		// LISTEN takes a moment: change until it is heard.
		require.Eventually(t, func() bool { maker.Changes().Changed("apr_warm"); return count("apr_warm") > 0 }, 5*time.Second, 20*time.Millisecond)
		maker.Changes().Changed("apr_1")
		require.Eventually(t, func() bool { return count("apr_1") == 1 }, 5*time.Second, time.Millisecond)
		waiter.Changes().Heard("apr_2") // heard, not made here: not relayed
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, 1, count("apr_1"), "one change is heard once")
		assert.Equal(t, 1, count("apr_2"))
	})
}
