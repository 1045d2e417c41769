package models

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/ids"
)

// Flow states. They are not shown on the wire; they decide
// whether a request may still attach.
const (
	FlowOpen      = "open"
	FlowCompleted = "completed"
	FlowCancelled = "cancelled"
)

// Flow groups the requests of one job.
type Flow struct {
	ID             string  `gorm:"primaryKey;size:40"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	Title          string  `gorm:"size:200;not null"`
	ExternalID     *string `gorm:"size:255;index"`
	Status         string  `gorm:"size:20;not null"`
	// StartedBy is the starter: a member id for a member token, else the
	// key id. Only the starter completes the flow.
	StartedBy     string `gorm:"size:60;not null"`
	StartedByName string `gorm:"size:320;not null"`
	CompletedAt   *time.Time
	CancelledAt   *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// NewFlow is an open flow started by by.
func NewFlow(orgID, title string, externalID *string, by Actor) *Flow {
	now := Now()
	return &Flow{ID: newID(ids.Flow), OrganizationID: orgID, Title: title, ExternalID: externalID, Status: FlowOpen,
		StartedBy: by.ID, StartedByName: by.Name, CreatedAt: now, UpdatedAt: now}
}

// InsertFlow writes a new flow, in ctx's transaction when it has one.
func (s *FlowStore) InsertFlow(ctx context.Context, f *Flow) error {
	return s.conn(ctx).Create(f).Error
}

// LockFlow returns one of the organisation's flows, locked for the rest of
// ctx's transaction.
func (s *FlowStore) LockFlow(ctx context.Context, orgID, id string) (*Flow, error) {
	return lockedIn[Flow](ctx, orgID, id, "flow "+id)
}

// SaveFlow writes f as it is, in ctx's transaction when it has one.
func (s *FlowStore) SaveFlow(ctx context.Context, f *Flow) error {
	return s.conn(ctx).Save(f).Error
}

// GetFlow returns one of the organisation's flows.
func (s *FlowStore) GetFlow(ctx context.Context, orgID, id string) (*Flow, error) {
	return take[Flow](s.conn(ctx), orgID, id, "flow "+id)
}

// FlowDetail is a flow with its members and timeline.
type FlowDetail struct {
	Flow *Flow
	// Requests are its requests of every kind, as the table of requests
	// keeps them.
	Requests []Request
	Reports  []Report
	Timeline []AuditEntry
}

// AllSettled reports whether nothing in the flow is outstanding now: no
// request of any kind is open.
func (d *FlowDetail) AllSettled() bool {
	for _, r := range d.Requests {
		if r.SettledAt == nil {
			return false
		}
	}
	return true
}

// GetFlowDetail returns a flow, the requests attached to it and every
// audited step of the flow and its requests, in order.
func (s *FlowStore) GetFlowDetail(ctx context.Context, orgID, id string) (*FlowDetail, error) {
	f, err := s.GetFlow(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return s.DetailOf(ctx, f)
}

// DetailOf reads what is attached to f, and its timeline, in ctx's
// transaction when it has one (which sees its own writes).
func (s *FlowStore) DetailOf(ctx context.Context, f *Flow) (*FlowDetail, error) {
	db := s.conn(ctx)
	d := &FlowDetail{Flow: f}
	for _, dst := range []any{&d.Requests, &d.Reports} {
		if err := db.Where("organization_id = ? AND flow_id = ?", f.OrganizationID, f.ID).Order("id").Find(dst).Error; err != nil {
			return nil, err
		}
	}
	err := db.Where("organization_id = ? AND flow_id = ?", f.OrganizationID, f.ID).Order("at, id").Find(&d.Timeline).Error
	return d, err
}

// Finish completes or cancels f (to) at at.
func (f *Flow) Finish(to string, at time.Time) {
	f.Status, f.UpdatedAt = to, at
	if to == FlowCompleted {
		f.CompletedAt = &at
	} else {
		f.CancelledAt = &at
	}
}

// AsAdministrator is the audit detail of an owner or administrator
// withdrawing what someone else started.
const AsAdministrator = "as an owner or administrator, for whoever started it"

// FlowAudit is the audit entry of f's step seq (1 for its start, 2 for
// its end), taken by by at at.
func FlowAudit(f *Flow, seq int, action string, by Actor, at time.Time) *AuditEntry {
	return &AuditEntry{ID: newID(ids.Audit), OrganizationID: f.OrganizationID, FlowID: &f.ID, SubjectType: "flow",
		SubjectID: f.ID, Seq: seq, Action: action, ActorID: by.ID, ActorName: by.Name, At: at}
}
