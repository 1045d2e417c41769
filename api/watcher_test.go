package api

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// A change made anywhere in this process (a page's decision, a worker's
// expiry) wakes a long-poll without waiting for the next poll: here the
// poll is an hour apart.
func TestWatcherWakesOnAChangeInThisProcess(t *testing.T) {
	store := models.NewStore(testenv.OpenDB(t, "sqlite"))
	w := newStatusWatcher(store, slog.Default(), time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	woke := make(chan struct{})
	go func() { w.Wait(ctx, "apr_1"); close(woke) }()
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.waiters["apr_1"]) == 1
	}, 5*time.Second, time.Millisecond)

	store.ApprovalChanged("apr_2")
	select {
	case <-woke:
		t.Fatal("a change to another approval woke the waiter")
	case <-time.After(50 * time.Millisecond):
	}
	store.ApprovalChanged("apr_1")
	select {
	case <-woke:
	case <-ctx.Done():
		t.Fatal("the change did not wake the waiter")
	}
}
