package requests

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/changes"
)

// A change made anywhere in this process (a page's decision, a worker's
// expiry) wakes a long-poll without waiting for the next poll: here the
// poll is an hour apart.
func TestWatcherWakesOnAChangeInThisProcess(t *testing.T) {
	hub := changes.New()
	w := NewWatcher(hub, func(context.Context, []string) ([]string, error) { return nil, nil }, slog.Default(), time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	woke := make(chan struct{})
	go func() { w.Wait(ctx, "apr_1"); close(woke) }()
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.waiters["apr_1"]) == 1
	}, 5*time.Second, time.Millisecond)

	hub.Changed("apr_2")
	select {
	case <-woke:
		t.Fatal("a change to another approval woke the waiter")
	case <-time.After(50 * time.Millisecond):
	}
	hub.Changed("apr_1")
	select {
	case <-woke:
	case <-ctx.Done():
		t.Fatal("the change did not wake the waiter")
	}
}

// A record that settles between polls wakes its waiter at the next poll,
// even when the change was made by another process (no hub signal).
func TestWatcherPollsForChangesElsewhere(t *testing.T) {
	settled := make(chan struct{})
	w := NewWatcher(changes.New(), func(_ context.Context, ids []string) ([]string, error) {
		select {
		case <-settled:
			return ids, nil
		default:
			return nil, nil
		}
	}, slog.Default(), 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var closed atomic.Bool
	load := func(context.Context) (*bool, error) { open := !closed.Load(); return &open, nil }
	go func() { time.Sleep(30 * time.Millisecond); closed.Store(true); close(settled) }()
	_, err := Wait(ctx, w, "apr_1", MaxWait, load, func(open *bool) bool { return *open })
	require.NoError(t, err)
	require.NoError(t, ctx.Err(), "the poll did not wake the waiter")
}

// A process that starts to stop (Hub.Drain) ends its long-polls at once
// with what is, a record still open, and answers any begun afterwards
// without waiting: they must not hold its shutdown for their whole wait.
func TestWaitEndsWhenTheProcessStops(t *testing.T) {
	hub := changes.New()
	w := NewWatcher(hub, func(context.Context, []string) ([]string, error) { return nil, nil }, slog.Default(), time.Hour)
	load := func(context.Context) (*int, error) { n := 1; return &n, nil }
	open := func(*int) bool { return true }
	answered := make(chan error, 1)
	go func() { _, err := Wait(context.Background(), w, "apr_1", MaxWait, load, open); answered <- err }()
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.waiters["apr_1"]) == 1
	}, 5*time.Second, time.Millisecond)

	hub.Drain()
	hub.Drain() // twice, as two listeners' shutdowns may
	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the long-poll held on after the process began to stop")
	}
	w.mu.Lock()
	require.Empty(t, w.waiters, "the waiter was forgotten")
	w.mu.Unlock()

	began := time.Now()
	rec, err := Wait(context.Background(), w, "apr_2", MaxWait, load, open)
	require.NoError(t, err)
	require.Equal(t, 1, *rec)
	require.Less(t, time.Since(began), time.Second, "a long-poll begun while stopping answers at once")
}

// Wait refuses a timeout outside 0..MaxWait, naming the wait parameter.
func TestWaitBounds(t *testing.T) {
	w := NewWatcher(changes.New(), nil, slog.Default(), time.Hour)
	load := func(context.Context) (*int, error) { n := 1; return &n, nil }
	for _, d := range []time.Duration{-time.Second, MaxWait + time.Second} {
		_, err := Wait(context.Background(), w, "x", d, load, func(*int) bool { return true })
		require.Error(t, err)
		require.Contains(t, err.Error(), "wait must be")
	}
	rec, err := Wait(context.Background(), w, "x", 0, load, func(*int) bool { return true })
	require.NoError(t, err)
	require.Equal(t, 1, *rec)
}
