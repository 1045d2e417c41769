package requests

import (
	"context"

	"github.com/assent-hq/assent/models"
)

// Change is one workflow transition of a request (record T) to write to
// its record.
type Change[T any] struct {
	OrganizationID string
	ID             string
	Seq            int
	// Apply copies the workflow's state onto the record and returns the
	// audit entry's action, actor, detail and time.
	Apply func(*T) (models.AuditEntry, error)
	// Event, when set, is the outbox event's kind; EventData builds its
	// data from the record as written.
	Event     string
	EventData func(*T) ([]byte, error)
}

// Writable are one kind's records as its transitions change them
// (models.Requests).
type Writable[T any] interface {
	Lock(ctx context.Context, orgID, id string) (*models.Locked[T], error)
	Save(ctx context.Context, l *models.Locked[T], seq int) error
}

// Journal keeps what a transition writes beside the record, in its
// transaction: the audit entry and the outbox's event.
type Journal interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	Audit(ctx context.Context, e *models.AuditEntry) error
	Emit(ctx context.Context, e *models.Event) error
}

// Persist writes one transition: the record, its audit entry and its
// event, in one transaction. A transition already written (its Seq not
// newer than the record's) changes nothing, so the activity that writes it
// may be retried freely; a record that is gone is
// models.ErrRequestMissing. It returns the record as it now is.
func Persist[T any](ctx context.Context, j Journal, recs Writable[T], ch Change[T]) (*T, error) {
	var rec *T
	err := j.Tx(ctx, func(ctx context.Context) error {
		l, err := recs.Lock(ctx, ch.OrganizationID, ch.ID)
		if err != nil {
			return err
		}
		rec = l.Record
		if l.Seq >= ch.Seq {
			return nil
		}
		entry, err := ch.Apply(rec)
		if err != nil {
			return err
		}
		if err := recs.Save(ctx, l, ch.Seq); err != nil {
			return err
		}
		entry.OrganizationID, entry.FlowID = l.OrganizationID, l.FlowID
		entry.SubjectType, entry.SubjectID, entry.Seq = l.Subject, ch.ID, ch.Seq
		if err := j.Audit(ctx, &entry); err != nil {
			return err
		}
		if ch.Event == "" {
			return nil
		}
		data, err := ch.EventData(rec)
		if err != nil {
			return err
		}
		return j.Emit(ctx, &models.Event{OrganizationID: l.OrganizationID, Kind: ch.Event, SubjectType: l.Subject,
			SubjectID: ch.ID, Data: data, CreatedAt: entry.At})
	})
	return rec, err
}
