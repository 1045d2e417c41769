package models

import (
	"encoding/base64"
	"errors"
	"strings"
	"sync"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
)

// Store runs the service's queries. Every method that reads or writes an
// organisation's records takes its id, so no query crosses tenants.
type Store struct {
	db *gorm.DB
	// eventsWritten wakes this process's dispatcher when it commits an
	// outbox event, so a delivery need not wait for the next poll.
	eventsWritten chan struct{}

	mu sync.Mutex
	// approvalWatchers hear of each approval changed through this
	// process, so long-polls answer at once.
	approvalWatchers []func(approvalID string)
}

// NewStore wraps db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db, eventsWritten: make(chan struct{}, 1)} }

// EventsWritten receives after this process commits an outbox event. It is
// a hint: other processes write events too, so dispatchers still poll.
func (s *Store) EventsWritten() <-chan struct{} { return s.eventsWritten }

func (s *Store) notifyEventsWritten() {
	select {
	case s.eventsWritten <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// WatchApprovals calls fn with the id of each approval this process
// changes from now on: a workflow transition it persisted, or an action it
// sent (whose transition a worker elsewhere may have persisted). It is a
// hint; changes made in other processes are only seen by polling.
func (s *Store) WatchApprovals(fn func(approvalID string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approvalWatchers = append(s.approvalWatchers, fn)
}

// ApprovalChanged tells the watchers that approval id changed.
func (s *Store) ApprovalChanged(id string) {
	s.mu.Lock()
	watchers := s.approvalWatchers
	s.mu.Unlock()
	for _, fn := range watchers {
		fn(id)
	}
}

// DB is the underlying handle, for health checks and tests.
func (s *Store) DB() *gorm.DB { return s.db }

// Page selects one page of a list: at most Limit rows after Cursor.
type Page struct {
	Limit  int
	Cursor string
}

// EncodeCursor makes an opaque cursor from the last id of a page.
func EncodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(id))
}

// decodeCursor returns the id a cursor stands for.
func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.Contains(string(b), "_") {
		return "", apperr.Field(apperr.InvalidRequest, "cursor", "cursor is not one this service issued")
	}
	return string(b), nil
}

// list returns one page of q, newest first. Ids sort by creation time, so
// the id is the cursor.
func list[T any](q *gorm.DB, p Page, idOf func(*T) string) ([]T, string, error) {
	if p.Cursor != "" {
		after, err := decodeCursor(p.Cursor)
		if err != nil {
			return nil, "", err
		}
		q = q.Where("id < ?", after)
	}
	var rows []T
	if err := q.Order("id DESC").Limit(p.Limit + 1).Find(&rows).Error; err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > p.Limit {
		rows = rows[:p.Limit]
		next = EncodeCursor(idOf(&rows[len(rows)-1]))
	}
	return rows, next, nil
}

// take reads the organisation's record of type T with id; q may carry
// locking clauses. A record of another organisation is missing too: what
// names the record in the 404.
func take[T any](q *gorm.DB, orgID, id, what string) (*T, error) {
	var rec T
	if err := q.Where("organization_id = ? AND id = ?", orgID, id).Take(&rec).Error; err != nil {
		return nil, notFound(err, what)
	}
	return &rec, nil
}

// remove deletes the organisation's record of type T with id, or 404s.
func remove[T any](q *gorm.DB, orgID, id, what string) error {
	res := q.Where("organization_id = ? AND id = ?", orgID, id).Delete(new(T))
	if res.Error == nil && res.RowsAffected == 0 {
		return notFound(gorm.ErrRecordNotFound, what)
	}
	return res.Error
}

// notFound turns gorm's missing-record error into the API's 404. A record
// of another organisation is missing too: the query is scoped.
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.New(apperr.NotFound, "%s not found", what)
	}
	return err
}

// duplicate turns a unique-constraint violation into a 409 naming field.
func duplicate(err error, field, format string, args ...any) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Field(apperr.Conflict, field, format, args...)
	}
	return err
}

func newID(prefix string) string { return ids.New(prefix) }
