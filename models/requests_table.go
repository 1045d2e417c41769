package models

import (
	"reflect"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Request is one row of the requests table: a request of any kind, as
// every kind shares it, so that what reads across kinds (a person's
// history, a flow's requests) is one query. Each create and transition writes it with the
// kind's record, in the same transaction (Requests.Insert and Save).
//
// The kinds' own tables keep these columns too, and are what the paths of
// one kind read (docs/decisions.md, "One table of requests").
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
func requestRow[T any, P RequestRecord[T]](rec *T) Request {
	h, k := P(rec).RequestHead(), P(rec).RequestKind()
	b := h.base
	row := Request{ID: b.ID, Kind: k.Subject, OrganizationID: b.OrganizationID, Status: b.Status, Title: b.Title,
		ExpiresAt: b.ExpiresAt, ExternalID: b.ExternalID, FlowID: b.FlowID, Requester: b.Requester,
		RequestedBy: b.RequestedBy, Seq: b.Seq, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
	row.Risk, _ = riskOf(rec)
	if b.Status != k.Open {
		at, by := P(rec).SettledWhen()
		if at == nil {
			at = &row.UpdatedAt
		}
		settled := *at
		row.SettledAt, row.SettledBy = &settled, by
	}
	return row
}

// saveRequestRow writes a request's row of the requests table, inserting
// it when an earlier version made the record without one.
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
