package models

import (
	"context"
	"reflect"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Request is one row of the requests table: a request of any kind, as
// every kind shares it, so that what reads across kinds (a person's
// history) is one query. Each create and transition writes it with the
// kind's record, in the same transaction (Requests.Create and Apply).
//
// This is the first half of one table of requests: the kinds' own tables
// still hold these columns, and are what the paths of one kind read, so
// that during a rolling upgrade the previous release's processes, which
// know only those tables, run beside this one's. MendRequests, which a
// worker runs as it starts, gives rows to what they wrote meanwhile
// (docs/decisions.md, "One table of requests").
type Request struct {
	ID             string    `gorm:"primaryKey;size:40"`
	Kind           string    `gorm:"size:20;not null"`
	OrganizationID string    `gorm:"size:40;not null"`
	Status         string    `gorm:"size:20;not null"`
	Title          string    `gorm:"size:200;not null"`
	ExpiresAt      time.Time `gorm:"not null"`
	ExternalID     *string   `gorm:"size:255"`
	FlowID         *string   `gorm:"size:40"`
	Requester      string    `gorm:"size:60;not null"`
	RequestedBy    string    `gorm:"size:320;not null"`
	// Seq is the record's transition that last wrote the row: one that
	// changes nothing else the row holds leaves it as it was.
	Seq int `gorm:"not null"`
	// Risk is an approval's risk; empty for a kind without one.
	Risk string `gorm:"size:20;not null;default:''"`
	// SettledAt is when the request left its open status (nil while
	// open), and SettledBy who settled it by their act (an approval's
	// decider), when someone did.
	SettledAt *time.Time
	SettledBy *string `gorm:"size:320"`
	// The record's own times, copied, not set by GORM.
	CreatedAt time.Time `gorm:"autoCreateTime:false"`
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`
}

// requestRow is rec's row of the requests table.
func (k *requestKind[T]) requestRow(h requestHead, rec *T) Request {
	b := h.base
	row := Request{ID: b.ID, Kind: k.subject, OrganizationID: b.OrganizationID, Status: b.Status, Title: b.Title,
		ExpiresAt: b.ExpiresAt, ExternalID: b.ExternalID, FlowID: b.FlowID, Requester: b.Requester,
		RequestedBy: b.RequestedBy, Seq: b.Seq, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
	if k.risk != nil {
		row.Risk = k.risk(rec)
	}
	if b.Status != k.open {
		at, by := k.settled(rec)
		if at == nil {
			at = &row.UpdatedAt
		}
		settled := *at
		row.SettledAt, row.SettledBy = &settled, by
	}
	return row
}

// saveRequestRow writes rec's row of the requests table, inserting it
// when a process of an earlier version made the record without one.
func (k *requestKind[T]) saveRequestRow(tx *gorm.DB, h requestHead, rec *T) error {
	return saveRequestRow(tx, k.requestRow(h, rec))
}

func saveRequestRow(tx *gorm.DB, row Request) error {
	return tx.Clauses(clause.OnConflict{UpdateAll: true}).Create(&row).Error
}

// requestRowChanged reports whether a transition changed what a request's
// row holds besides its sequence and time. Most (the first, a reminder, a
// delivery) change only those, and writing the row for them would cost
// every create a statement. A request settles once, so a settled row's
// time stays what it was when it settled.
func requestRowChanged(was, now Request) bool {
	was.Seq, was.UpdatedAt = now.Seq, now.UpdatedAt
	if was.SettledAt != nil && now.SettledAt != nil {
		was.SettledAt = now.SettledAt
	}
	return !reflect.DeepEqual(was, now)
}

// MendRequests brings the requests table in step with the kinds' tables
// where processes of an earlier version, which write only those, left it
// behind during a rolling upgrade: records without a row or whose row's
// status is not theirs, and rows whose record they took back. A worker runs it as
// it starts. It returns how many requests it mended.
func (s *RequestStore) MendRequests(ctx context.Context) (int, error) {
	return s.mendEachKind(ctx, kindMender.mendRequests)
}

func (r Requests[T, P]) mendRequests(ctx context.Context) (int, error) {
	k := r.k
	gone := r.s.db.WithContext(ctx).Where("kind = ? AND NOT EXISTS (SELECT 1 FROM "+k.table+" WHERE "+k.table+".id = requests.id)", k.subject).
		Delete(&Request{})
	if gone.Error != nil {
		return 0, gone.Error
	}
	n, err := r.mendStale(ctx, "requests row", func(db *gorm.DB) (stale []string, err error) {
		err = db.Table(k.table).Joins("LEFT JOIN requests ON requests.id = "+k.table+".id").
			Where("requests.id IS NULL OR requests.status <> "+k.table+".status").
			Order(k.table+".id").Limit(mendBatch).Pluck(k.table+".id", &stale).Error
		return stale, err
	}, k.saveRequestRow)
	return int(gone.RowsAffected) + n, err
}
