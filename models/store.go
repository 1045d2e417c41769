package models

import (
	"encoding/base64"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/changes"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/secretkey"
)

// core is what every aggregate store shares: the database, the key ring
// that seals secret columns, and the hub that hears of what this process
// commits. The transaction helpers every aggregate writes through (audit
// entries, outbox events, claim binding) take the transaction itself.
type core struct {
	db *gorm.DB
	// secrets seals what must be kept but never stored in clear.
	secrets *secretkey.Ring
	// changes hears of what this process commits: changed records and
	// outbox events.
	changes *changes.Hub
	// metrics counts what this process commits (metrics.go); nil counts
	// nothing.
	metrics *metrics.Metrics
	// settings is the process's copy of what creates read of each
	// organisation's settings (settings_cache.go).
	settings *settingsCache
}

// Changes is the hub that hears of each record this store changes and
// each outbox event it writes, so long-polls and the dispatcher need not
// wait for their next poll.
func (s *core) Changes() *changes.Hub { return s.changes }

// DB is the underlying handle, for health checks and tests.
func (s *core) DB() *gorm.DB { return s.db }

// Keys is the instance key ring, for the checks that name its keys (the
// Temporal namespace's marker, in readiness).
func (s *core) Keys() *secretkey.Ring { return s.secrets }

// Store runs the service's queries. It composes one store per aggregate,
// each over the same core, so a caller may hold the whole or only the
// aggregates it uses. Every method that reads or writes an organisation's
// records takes its id, so no query crosses tenants.
type Store struct {
	*core
	*IdempotencyStore
	*PushStore
	*SigningKeyStore
	*SlackStore
	*GateStore
	*ReceiptStore
	*FlowStore
	*DeliveryStore
	*CommentStore
	*DirectoryStore
	*SessionStore
	*RequestStore
	*ReportStore
	*EvidenceStore
	*SystemStore
}

// IdempotencyStore keeps the claims of Idempotency-Keys (idempotency.go);
// BindClaim binds one to a record in any aggregate's transaction.
type IdempotencyStore struct{ *core }

// PushStore keeps browsers' Web Push subscriptions and the instance's
// VAPID key (push.go).
type PushStore struct{ *core }

// SigningKeyStore keeps the instance's signing keys, one family per use,
// and signs decision tokens (signing_keys.go, decision_tokens.go).
type SigningKeyStore struct{ *core }

// SlackStore keeps each organisation's Slack app, its secrets sealed
// (slack.go).
type SlackStore struct{ *core }

// GateStore keeps registered actions and the gate's checks (actions.go).
type GateStore struct{ *core }

// ReceiptStore keeps execution receipts: what ran of what a decision
// token decided (receipts.go).
type ReceiptStore struct{ *core }

// FlowStore keeps flows, which group the requests of one job (flows.go).
type FlowStore struct{ *core }

// DeliveryStore keeps webhook endpoints (webhooks.go), the outbox's
// events and their dispatch to deliveries (outbox.go, deliveries.go).
type DeliveryStore struct {
	*core
	// slack is the target of deliveries to the Slack app's channel.
	slack *SlackStore
}

// CommentStore keeps comment threads on reports, their comments and
// images (comments.go).
type CommentStore struct{ *core }

// DirectoryStore keeps an organisation and its people: members, guests,
// teams (directory.go) and their look-up (directory_lookup.go), API keys
// and member tokens and the authentication of a key (keys.go), the
// organisation's rules (rules.go), and people by id (People,
// decision_links.go) or by email (ActiveMemberByEmail, slack.go).
type DirectoryStore struct{ *core }

// SessionStore keeps people's sessions and sign-in links (sessions.go,
// sso.go).
type SessionStore struct{ *core }

// RequestStore keeps the requests of every kind: each kind's shared paths
// as Requests (requests.go), reached through each kind's Records
// (RecordsOf), a respondent's drafts (drafts.go), decision links and
// notices (decision_links.go), and a person's history across the kinds
// (history.go).
type RequestStore struct{ *core }

// ReportStore keeps reports: their versions and upload tickets
// (reports.go), datasets (datasets.go), grants (grants.go), reading
// (reading.go: reader tickets and sessions, views, access requests),
// readership (analytics.go), schedules (schedules.go) and sends
// (sends.go).
type ReportStore struct {
	*core
	// claims finds the record an earlier attempt of a claimed publish made.
	claims *IdempotencyStore
}

// EvidenceStore gathers what an evidence export holds of a flow or a
// report (evidence.go) and verifies an organisation's audit chain
// (audit.go).
type EvidenceStore struct {
	*core
	flows    *FlowStore
	reports  *ReportStore
	comments *CommentStore
}

// NewStore wraps db; secrets seals the secret columns.
func NewStore(db *gorm.DB, secrets *secretkey.Ring) *Store {
	c := &core{db: db, secrets: secrets, changes: changes.New(), settings: &settingsCache{}}
	c.relayChanges()
	slack := &SlackStore{c}
	claims := &IdempotencyStore{c}
	flows := &FlowStore{c}
	comments := &CommentStore{c}
	reports := &ReportStore{c, claims}
	return &Store{
		core:             c,
		IdempotencyStore: claims,
		PushStore:        &PushStore{c},
		SigningKeyStore:  &SigningKeyStore{c},
		SlackStore:       slack,
		GateStore:        &GateStore{c},
		ReceiptStore:     &ReceiptStore{c},
		FlowStore:        flows,
		DeliveryStore:    &DeliveryStore{c, slack},
		CommentStore:     comments,
		DirectoryStore:   &DirectoryStore{c},
		SessionStore:     &SessionStore{c},
		RequestStore:     &RequestStore{c},
		ReportStore:      reports,
		EvidenceStore:    &EvidenceStore{c, flows, reports, comments},
		SystemStore:      &SystemStore{c},
	}
}

// Reports is the reports' queries, which the reports service owns.
func (s *Store) Reports() *ReportStore { return s.ReportStore }

// Directory is the organisation's people and rules, which the
// administration service owns.
func (s *Store) Directory() *DirectoryStore { return s.DirectoryStore }

// Comments is the comment threads' queries, which the comments service
// owns.
func (s *Store) Comments() *CommentStore { return s.CommentStore }

// Page selects one page of a list: at most Limit rows after Cursor.
type Page struct {
	Limit  int
	Cursor string
}

// EncodeCursor makes an opaque cursor from the last id of a page.
func EncodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(id))
}

// decodeCursor returns the id a cursor of a list of prefix's ids stands
// for: one New made, so that a cursor of another list, or one cut short
// or made up, is refused rather than read as some page.
func decodeCursor(c, prefix string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !ids.Made(string(b), prefix) {
		return "", apperr.Field(apperr.InvalidRequest, "cursor", "cursor is not one this list issued: send the nextCursor of its last page")
	}
	return string(b), nil
}

// list returns one page of q, whose ids have prefix, newest first. Ids
// sort by creation time, so the id is the cursor.
func list[T any](q *gorm.DB, p Page, prefix string, idOf func(*T) string) ([]T, string, error) {
	if p.Cursor != "" {
		after, err := decodeCursor(p.Cursor, prefix)
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

// byReference narrows q to the requests requester made with externalID.
// An externalId is its caller's own reference, which another key may use
// too: finding one by it must never find another caller's request (an
// agent repeating a call would adopt it). Without a requester it finds
// nothing.
func byReference(q *gorm.DB, externalID, requester string) *gorm.DB {
	if externalID == "" {
		return q
	}
	return q.Where("external_id = ? AND requester = ?", externalID, requester)
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

// duplicateOf is ErrDuplicate for a write a unique key refused.
func duplicateOf(err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return ErrDuplicate
	}
	return err
}

func newID(prefix string) string { return ids.New(prefix) }
