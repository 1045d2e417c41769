package models

import (
	"encoding/base64"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/changes"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/secretkey"
)

// Store runs the service's queries. Every method that reads or writes an
// organisation's records takes its id, so no query crosses tenants.
type Store struct {
	db *gorm.DB
	// secrets seals what must be kept but never stored in clear.
	secrets *secretkey.Ring
	// changes hears of what this process commits: changed records and
	// outbox events.
	changes *changes.Hub
}

// NewStore wraps db; secrets seals the secret columns.
func NewStore(db *gorm.DB, secrets *secretkey.Ring) *Store {
	return &Store{db: db, secrets: secrets, changes: changes.New()}
}

// Changes is the hub that hears of each record this store changes and
// each outbox event it writes, so long-polls and the dispatcher need not
// wait for their next poll.
func (s *Store) Changes() *changes.Hub { return s.changes }

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

// matching narrows q to the rows whose columns hold the values given,
// each pair {column, value}; an empty value does not narrow.
func matching(q *gorm.DB, pairs ...[2]string) *gorm.DB {
	for _, p := range pairs {
		if p[1] != "" {
			q = q.Where(p[0]+" = ?", p[1])
		}
	}
	return q
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
// of another organisation is missing too: the query is scoped. what ends
// with the id, trimmed so a blank one leaves no double space.
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.New(apperr.NotFound, "%s not found", strings.TrimSpace(what))
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
