package requests

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/changes"
	"github.com/assent-hq/assent/internal/validate"
)

// MaxWait bounds a long-poll.
const MaxWait = 60 * time.Second

// Watcher wakes those waiting for records to settle. While anyone waits,
// one goroutine checks every waited id with a single query each interval;
// a waiter holds no connection and no goroutine of its own. Changes made
// through this process (the hub) wake waiters at once.
type Watcher struct {
	settled func(ctx context.Context, ids []string) ([]string, error)
	// draining closes when the process stops: waits end at once.
	draining <-chan struct{}
	log      *slog.Logger
	interval time.Duration

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	polling bool
}

// NewWatcher returns a watcher that hears of changes from hub and polls
// every interval with settled, which returns those of ids that no longer
// wait.
func NewWatcher(hub *changes.Hub, settled func(ctx context.Context, ids []string) ([]string, error), log *slog.Logger, interval time.Duration) *Watcher {
	w := &Watcher{settled: settled, draining: hub.Draining(), log: log, interval: interval, waiters: map[string]map[chan struct{}]struct{}{}}
	hub.Watch(w.Notify)
	return w
}

// Wait returns when record id may have settled, ctx ends or the process
// stops.
func (w *Watcher) Wait(ctx context.Context, id string) {
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
	case <-w.draining:
		w.forget(id, ch)
	case <-ctx.Done():
		w.forget(id, ch)
	}
}

// forget takes ch off id's waiters, unless a Notify has already.
func (w *Watcher) forget(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, waiting := w.waiters[id][ch]; waiting {
		delete(w.waiters[id], ch)
		if len(w.waiters[id]) == 0 {
			delete(w.waiters, id)
		}
	}
}

// stopping reports whether the process is stopping (Hub.Drain).
func (w *Watcher) stopping() bool {
	select {
	case <-w.draining:
		return true
	default:
		return false
	}
}

// Notify wakes everyone waiting on id.
func (w *Watcher) Notify(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.waiters[id] {
		close(ch)
	}
	delete(w.waiters, id)
}

// poll runs while anyone waits.
func (w *Watcher) poll() {
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

func (w *Watcher) check(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	settled, err := w.settled(ctx, ids)
	if err != nil {
		w.log.Warn("long-poll status check failed", "error", err)
		return
	}
	for _, id := range settled {
		w.Notify(id)
	}
}

// Wait reads a record with load and, while open says it still waits,
// waits for it to change, for at most timeout (0 to MaxWait). A wake-up
// means "may have changed": a change that leaves it open (a question
// asked) waits on until it settles or time is up. A process that is
// stopping answers at once with what is. It serves the REST
// long-poll and any other caller that blocks on an outcome.
func Wait[T any](ctx context.Context, w *Watcher, id string, timeout time.Duration, load func(context.Context) (*T, error), open func(*T) bool) (*T, error) {
	if timeout < 0 || timeout > MaxWait {
		return nil, apperr.Field(apperr.InvalidRequest, "wait", "wait must be a duration from 0 to %s, such as 30s", validate.Duration(MaxWait))
	}
	rec, err := load(ctx)
	if err != nil || timeout == 0 {
		return rec, err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for err == nil && open(rec) && wctx.Err() == nil && !w.stopping() {
		w.Wait(wctx, id)
		rec, err = load(ctx)
	}
	return rec, err
}
