package models

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
)

// A service owns its transactions: it runs its use case in Tx, and every
// store method it calls with the context Tx gives reads and writes in that
// transaction (docs/architecture.md, "Transactions"). The store's writes
// that must share one (a record, its audit entry, its event) take that
// context; the rules deciding what to write are the service's.

// txKey carries a transaction in a context.
type txKey struct{}

// txState is a running transaction and what its commit must announce:
// that it wrote events, and which records it changed.
type txState struct {
	tx           *gorm.DB
	eventWritten bool
	changed      []string
	// onCommit runs once the transaction commits (a metric counted).
	onCommit []func()
}

// Tx runs fn in a transaction, carried in the context fn is given, and
// commits when fn returns nil. Called with a context already in one, fn
// joins it. Once it commits, the outbox's dispatcher hears of the events
// it wrote.
func (s *core) Tx(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, in := ctx.Value(txKey{}).(*txState); in {
		return fn(ctx)
	}
	st := &txState{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		st.tx = tx
		return fn(context.WithValue(ctx, txKey{}, st))
	})
	if err != nil {
		return err
	}
	if st.eventWritten {
		s.changes.EventWritten()
	}
	for _, id := range st.changed {
		s.changes.Changed(id)
	}
	for _, fn := range st.onCommit {
		fn()
	}
	return nil
}

// Changed tells the long-polls and watchers of record id that it changed,
// once ctx's transaction commits (at once outside one).
func (s *core) Changed(ctx context.Context, id string) {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		st.changed = append(st.changed, id)
		return
	}
	s.changes.Changed(id)
}

// refuseBesideTx refuses a statement run on the pool while its context
// carries a transaction: it would read outside what the transaction holds,
// and on SQLite wait for a connection the queued writers hold behind it.
// Registered in Open before every statement's callbacks.
func refuseBesideTx(db *gorm.DB) {
	st, ok := db.Statement.Context.Value(txKey{}).(*txState)
	if ok && st.tx != nil && db.Statement.ConnPool != st.tx.Statement.ConnPool {
		_ = db.AddError(apperr.New(apperr.Internal, "a statement ran beside its context's transaction, not in it"))
	}
}

// conn is ctx's transaction, or else the database.
func (s *core) conn(ctx context.Context) *gorm.DB {
	if st, ok := ctx.Value(txKey{}).(*txState); ok {
		return st.tx
	}
	return s.db.WithContext(ctx)
}

// oneStatement is db for a write of one row that names nothing else (no
// associations, no hooks): it is atomic alone, and GORM's own transaction
// around it would cost two round trips more. Every email about a request
// writes two such rows.
func oneStatement(db *gorm.DB) *gorm.DB {
	return db.Session(&gorm.Session{SkipDefaultTransaction: true})
}

// inTx is ctx's transaction, for the writes and locks that mean nothing
// outside one; a call outside Tx is a programming error.
func inTx(ctx context.Context) (*txState, error) {
	st, ok := ctx.Value(txKey{}).(*txState)
	if !ok {
		return nil, apperr.New(apperr.Internal, "a write that needs a transaction was called outside Tx")
	}
	return st, nil
}

// lockedIn reads one of the organisation's T (what names it in a not
// found) under its row lock, for the rest of ctx's transaction.
func lockedIn[T any](ctx context.Context, orgID, id, what string) (*T, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	return take[T](st.tx.Clauses(lockForUpdate(st.tx)...), orgID, id, what)
}

// Audit appends e to its organisation's audit chain, in ctx's transaction.
func (s *core) Audit(ctx context.Context, e *AuditEntry) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = newID(ids.Audit)
	}
	return writeAudit(st.tx, e)
}

// Emit writes e to the outbox, in ctx's transaction; the dispatcher hears
// of it once that commits.
func (s *core) Emit(ctx context.Context, e *Event) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if e.ID == "" {
		e.ID = newID(ids.Event)
	}
	if err := st.tx.Create(e).Error; err != nil {
		return err
	}
	st.eventWritten = true
	return nil
}

// ErrDuplicate is a write that a unique key refused. It ends the
// transaction it happened in: the service decides what to do once it has
// rolled back.
var ErrDuplicate = errors.New("a record with this key exists")

// insertIn writes the new record v in ctx's transaction; a unique key's
// refusal is ErrDuplicate.
func insertIn(ctx context.Context, v any) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return duplicateOf(st.tx.Create(v).Error)
}

// BindClaim binds claim (when not nil) to the record id in ctx's
// transaction; when an earlier attempt of the claimed request bound it
// already, that record's id is returned and nothing should be written.
func (s *core) BindClaim(ctx context.Context, claim *Claim, id string) (earlier string, err error) {
	st, err := inTx(ctx)
	if err != nil {
		return "", err
	}
	return BindClaim(st.tx, claim, id)
}

// NextSeq is the number of subject's next audit entry, read in ctx's
// transaction under a lock the caller holds on the subject, so two steps
// never take one number.
func (s *core) NextSeq(ctx context.Context, orgID, subjectID string) (int, error) {
	st, err := inTx(ctx)
	if err != nil {
		return 0, err
	}
	return nextSeq(st.tx, orgID, subjectID)
}

// Audited says whether e's subject already has an entry with e's action
// and detail: a retried step that must be written once.
func (s *core) Audited(ctx context.Context, e *AuditEntry) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&AuditEntry{}).Where("organization_id = ? AND subject_id = ? AND action = ? AND detail = ?",
		e.OrganizationID, e.SubjectID, e.Action, e.Detail).Count(&n).Error
	return n > 0, err
}
