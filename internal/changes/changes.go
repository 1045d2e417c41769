// Package changes is the process's hub of change signals: a record changed
// (to wake long-polls waiting on it) and an outbox event was written (to
// wake the dispatcher). Signals are hints: on PostgreSQL a record's change
// is relayed to the other processes (NOTIFY, see models.Store.Listen), but
// a relayed signal can be lost and SQLite relays none, so listeners also
// poll.
package changes

import "sync"

// Hub carries the signals. The zero value is not usable; call New.
type Hub struct {
	eventsWritten chan struct{}
	// draining closes when the process starts to stop (Drain).
	draining  chan struct{}
	drainOnce sync.Once

	mu       sync.Mutex
	watchers []func(id string)
	relay    func(id string)
}

// New returns an empty hub.
func New() *Hub { return &Hub{eventsWritten: make(chan struct{}, 1), draining: make(chan struct{})} }

// Drain says the process is stopping: those waiting for a change (the
// long-polls) stop waiting and answer what is, rather than hold the
// process's shutdown for up to their whole wait.
func (h *Hub) Drain() { h.drainOnce.Do(func() { close(h.draining) }) }

// Draining closes once Drain is called.
func (h *Hub) Draining() <-chan struct{} { return h.draining }

// EventsWritten receives after this process commits an outbox event.
func (h *Hub) EventsWritten() <-chan struct{} { return h.eventsWritten }

// EventWritten says an outbox event was committed; several in a row
// collapse into one wake-up.
func (h *Hub) EventWritten() {
	select {
	case h.eventsWritten <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Watch calls fn with the id of each record this process changes from
// now on.
func (h *Hub) Watch(fn func(id string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watchers = append(h.watchers, fn)
}

// Relay sets how a change this process makes is told to the others
// (PostgreSQL's NOTIFY), which hear of it through Heard.
func (h *Hub) Relay(fn func(id string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.relay = fn
}

// Changed says this process changed the record id: its watchers hear of
// it, and through the relay other processes' do.
func (h *Hub) Changed(id string) {
	h.Heard(id)
	h.mu.Lock()
	relay := h.relay
	h.mu.Unlock()
	if relay != nil {
		relay(id)
	}
}

// Heard tells this process's watchers that the record id changed, made so
// by another process: one relayed it, or an answer from Temporal showed it.
func (h *Hub) Heard(id string) {
	h.mu.Lock()
	watchers := h.watchers
	h.mu.Unlock()
	for _, fn := range watchers {
		fn(id)
	}
}
