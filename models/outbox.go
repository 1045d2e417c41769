package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/tracing"
)

// AuditEntry is one step in a record's history. Entries are only ever
// inserted; (SubjectID, Seq) is unique, so a retried write is a no-op.
type AuditEntry struct {
	ID             string    `gorm:"primaryKey;size:40"`
	OrganizationID string    `gorm:"size:40;not null;index;uniqueIndex:idx_audit_org_position,priority:1"`
	FlowID         *string   `gorm:"size:40;index"`
	SubjectType    string    `gorm:"size:20;not null"`
	SubjectID      string    `gorm:"size:40;not null;uniqueIndex:idx_audit_subject_seq,priority:1"`
	Seq            int       `gorm:"not null;uniqueIndex:idx_audit_subject_seq,priority:2"`
	Action         string    `gorm:"size:40;not null"`
	ActorID        string    `gorm:"size:60;not null"`
	ActorName      string    `gorm:"size:320;not null"`
	Detail         string    `gorm:"type:text;not null"`
	At             time.Time `gorm:"not null"`
	// Position is the entry's place in its organisation's audit chain,
	// from 1; EntryHash chains it to the entry before (see audit.go).
	Position  int64  `gorm:"not null;uniqueIndex:idx_audit_org_position,priority:2"`
	EntryHash string `gorm:"size:64;not null"`
}

// Event is an outbox row: written in the transaction that caused it and
// delivered later, so a crash loses none.
type Event struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;index"`
	Kind           string     `gorm:"size:60;not null"`
	SubjectType    string     `gorm:"size:20;not null"`
	SubjectID      string     `gorm:"size:40;not null;index"`
	Data           RawJSON    `gorm:"type:text;not null"`
	CreatedAt      time.Time  `gorm:"not null"`
	DispatchedAt   *time.Time `gorm:"index"`
	// Traceparent is the trace the event was written in (W3C
	// traceparent, "" when none was traced): its deliveries continue it.
	Traceparent string `gorm:"size:55;not null;default:''"`
}

// BeforeCreate keeps the trace of the transaction writing e, whichever
// of the stores writes it.
func (e *Event) BeforeCreate(tx *gorm.DB) error {
	if e.Traceparent == "" {
		e.Traceparent = tracing.Traceparent(tx.Statement.Context)
	}
	return nil
}

// ListEvents returns the organisation's outbox events about a subject, in
// order. Used by tests and, later, the dispatcher.
func (s *DeliveryStore) ListEvents(ctx context.Context, orgID, subjectID string) ([]Event, error) {
	var out []Event
	err := s.db.WithContext(ctx).Where("organization_id = ? AND subject_id = ?", orgID, subjectID).Order("id").Find(&out).Error
	return out, err
}
