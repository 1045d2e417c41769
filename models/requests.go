package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// requestHead is what every kind of request's record holds for the shared
// write path: who it is, its flow, and the last workflow transition applied.
type requestHead struct {
	id, organizationID string
	flowID             *string
	seq                *int
	updatedAt          *time.Time
}

// requestRecord is the record of a kind of request (T), through its pointer.
type requestRecord[T any] interface {
	*T
	head() requestHead
}

// RequestChange is one workflow transition to apply to the read model of a
// request of type T.
type RequestChange[T any] struct {
	OrganizationID string
	ID             string
	Seq            int
	// Apply copies the workflow's state onto the record and returns the
	// audit entry's action, actor, detail and time.
	Apply func(*T) (AuditEntry, error)
	// Event, when set, is the outbox event's kind; EventData builds its
	// data from the updated record.
	Event     string
	EventData func(*T) ([]byte, error)
}

// applyRequestChange writes a transition, its audit entry and its event in
// one transaction. A change already applied (Seq not newer) is skipped, so
// the activity may be retried freely. before sees the record as it was,
// after writes what the kind indexes beside it.
func applyRequestChange[T any, P requestRecord[T]](s *Store, ctx context.Context, subjectType string, ch RequestChange[T],
	before func(*T), after func(*gorm.DB, *T) error) (*T, error) {
	var rec *T
	wroteEvent := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if rec, err = take[T](tx.Clauses(lockForUpdate(tx)...), ch.OrganizationID, ch.ID, subjectType+" "+ch.ID); err != nil {
			return err
		}
		h := P(rec).head()
		if *h.seq >= ch.Seq {
			return nil
		}
		before(rec)
		entry, err := ch.Apply(rec)
		if err != nil {
			return err
		}
		*h.seq = ch.Seq
		*h.updatedAt = Now()
		if err := tx.Save(rec).Error; err != nil {
			return err
		}
		if err := after(tx, rec); err != nil {
			return err
		}
		entry.ID, entry.OrganizationID, entry.FlowID = newID(ids.Audit), h.organizationID, h.flowID
		entry.SubjectType, entry.SubjectID, entry.Seq = subjectType, h.id, ch.Seq
		if err := writeAudit(tx, &entry); err != nil {
			return err
		}
		if ch.Event == "" {
			return nil
		}
		data, err := ch.EventData(rec)
		if err != nil {
			return err
		}
		wroteEvent = true
		return tx.Create(&Event{ID: newID(ids.Event), OrganizationID: h.organizationID, Kind: ch.Event,
			SubjectType: subjectType, SubjectID: h.id, Data: data, CreatedAt: entry.At}).Error
	})
	if err == nil && wroteEvent {
		s.changes.EventWritten()
	}
	if err == nil {
		s.changes.Changed(ch.ID)
	}
	return rec, err
}

// createRequest inserts a new request's record and what indexes it, and
// binds claim (when not nil) to it in the same transaction. The flow, when
// named, must be open. When an earlier attempt of the claimed request
// already made a record, nothing is written and its id is returned.
func createRequest[T any, P requestRecord[T]](s *Store, ctx context.Context, rec *T, claim *Claim, index func(*gorm.DB) error) (earlier string, err error) {
	h := P(rec).head()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if h.flowID != nil {
			if err := requireOpenFlow(tx, h.organizationID, *h.flowID); err != nil {
				return err
			}
		}
		if earlier, err = BindClaim(tx, claim, h.id); err != nil {
			return err
		}
		if earlier != "" {
			return errRollback
		}
		if err := tx.Create(rec).Error; err != nil {
			return err
		}
		return index(tx)
	})
	if earlier != "" {
		return earlier, nil
	}
	return "", err
}

// statuses returns the status of each record of type T among ids, with one
// query, for the long-poll.
func statuses[T any](db *gorm.DB, ids []string) (map[string]string, error) {
	var rows []struct{ ID, Status string }
	if err := db.Model(new(T)).Select("id, status").Where("id IN ?", ids).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Status
	}
	return out, nil
}

// sealCallbackSecret seals the callback secret of request id for c, its
// record's column.
func (s *Store) sealCallbackSecret(c sealedColumn, id string, secret *string) *string {
	if secret == nil {
		return nil
	}
	sealed := s.seal(c, *secret, id)
	return &sealed
}

// openCallbackSecret opens the sealed callback secret of request id, read
// from c.
func (s *Store) openCallbackSecret(c sealedColumn, id string, sealed *string) (*string, error) {
	if sealed == nil {
		return nil, nil
	}
	secret, err := s.open(c, *sealed, id)
	if err != nil {
		return nil, err
	}
	return &secret, nil
}

// deleteUnstarted removes a request of type T whose workflow never started
// (Seq 0), what indexes it (the index table's rows whose column names it),
// and unbinds the claim that made it, so a failed creation leaves nothing
// behind and a retry with the same key creates afresh.
func deleteUnstarted[T any](s *Store, ctx context.Context, orgID, id string, index any, column string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("organization_id = ? AND id = ? AND seq = 0", orgID, id).Delete(new(T))
		if res.Error != nil || res.RowsAffected == 0 {
			return res.Error
		}
		if err := unbindClaims(tx, orgID, id); err != nil {
			return err
		}
		return tx.Where(column+" = ?", id).Delete(index).Error
	})
}

// unowned lists requests of type T still in their open status whose
// workflow has not run its first step although they were created before
// olderThan: the reconciler starts them.
func unowned[T any](db *gorm.DB, open string, olderThan time.Time, limit int) ([]T, error) {
	var out []T
	err := db.Where("seq = 0 AND status = ? AND created_at < ?", open, olderThan).Order("id").Limit(limit).Find(&out).Error
	return out, err
}
