package api

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assent-hq/assent/models"
)

// statusWatcher wakes long-polls when their approval leaves pending. While
// anyone waits, one goroutine per process checks every waited id with a
// single query each interval; a waiter holds no connection and no
// goroutine of its own. Changes made through this process (the store's
// WatchApprovals) wake waiters at once.
type statusWatcher struct {
	store    *models.Store
	log      *slog.Logger
	interval time.Duration

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	polling bool
}

func newStatusWatcher(store *models.Store, log *slog.Logger, interval time.Duration) *statusWatcher {
	w := &statusWatcher{store: store, log: log, interval: interval, waiters: map[string]map[chan struct{}]struct{}{}}
	store.WatchApprovals(w.Notify)
	return w
}

// Wait returns when approval id may have left pending or ctx ends.
func (w *statusWatcher) Wait(ctx context.Context, id string) {
	ch := make(chan struct{})
	w.mu.Lock()
	if w.waiters[id] == nil {
		w.waiters[id] = map[chan struct{}]struct{}{}
	}
	w.waiters[id][ch] = struct{}{}
	if !w.polling {
		w.polling = true
		go w.poll()
	}
	w.mu.Unlock()

	select {
	case <-ch:
	case <-ctx.Done():
		w.mu.Lock()
		if _, waiting := w.waiters[id][ch]; waiting {
			delete(w.waiters[id], ch)
			if len(w.waiters[id]) == 0 {
				delete(w.waiters, id)
			}
		}
		w.mu.Unlock()
	}
}

// Notify wakes everyone waiting on id.
func (w *statusWatcher) Notify(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.waiters[id] {
		close(ch)
	}
	delete(w.waiters, id)
}

// poll runs while anyone waits.
func (w *statusWatcher) poll() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		waited := slices.Collect(maps.Keys(w.waiters))
		if len(waited) == 0 {
			w.polling = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()

		for chunk := range slices.Chunk(waited, 500) {
			w.check(chunk)
		}
	}
}

func (w *statusWatcher) check(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	statuses, err := w.store.ApprovalStatuses(ctx, ids)
	if err != nil {
		w.log.Warn("long-poll status check failed", "error", err)
		return
	}
	for id, status := range statuses {
		if status != models.ApprovalPending {
			w.Notify(id)
		}
	}
}
