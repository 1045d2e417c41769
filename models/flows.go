package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/states"
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

// CreateFlow starts an open flow.
func (s *FlowStore) CreateFlow(ctx context.Context, orgID, title string, externalID *string, by Actor) (*Flow, error) {
	now := Now()
	f := &Flow{ID: newID(ids.Flow), OrganizationID: orgID, Title: title, ExternalID: externalID, Status: FlowOpen,
		StartedBy: by.ID, StartedByName: by.Name, CreatedAt: now, UpdatedAt: now}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(f).Error; err != nil {
			return err
		}
		return writeAudit(tx, flowAudit(f, 1, "created", by, now))
	})
	return f, err
}

// GetFlow returns one of the organisation's flows.
func (s *FlowStore) GetFlow(ctx context.Context, orgID, id string) (*Flow, error) {
	return take[Flow](s.db.WithContext(ctx), orgID, id, "flow "+id)
}

// FlowDetail is a flow with its members and timeline.
type FlowDetail struct {
	Flow        *Flow
	Approvals   []Approval
	Collections []Collection
	Reviews     []Review
	Reports     []Report
	Timeline    []AuditEntry
}

// AllSettled reports whether nothing in the flow is outstanding now.
func (d *FlowDetail) AllSettled() bool {
	for _, a := range d.Approvals {
		if a.Status == states.Pending {
			return false
		}
	}
	for _, c := range d.Collections {
		if c.Status == states.Open {
			return false
		}
	}
	for _, r := range d.Reviews {
		if r.Status == states.Open {
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
	return flowDetail(s.db.WithContext(ctx), f)
}

// flowDetail reads what is attached to f, and its timeline, through db
// (a transaction sees its own writes).
func flowDetail(db *gorm.DB, f *Flow) (*FlowDetail, error) {
	d := &FlowDetail{Flow: f}
	for _, dst := range []any{&d.Approvals, &d.Collections, &d.Reviews, &d.Reports} {
		if err := db.Where("organization_id = ? AND flow_id = ?", f.OrganizationID, f.ID).Order("id").Find(dst).Error; err != nil {
			return nil, err
		}
	}
	err := db.Where("organization_id = ? AND flow_id = ?", f.OrganizationID, f.ID).Order("at, id").Find(&d.Timeline).Error
	return d, err
}

// FlowEventData builds flow.completed's data from the flow as completed
// (the wire serializer).
type FlowEventData func(*FlowDetail) ([]byte, error)

// FinishFlow completes or cancels an open flow. Only the starter
// completes; a completion writes flow.completed with data's data in the
// same transaction.
func (s *FlowStore) FinishFlow(ctx context.Context, orgID, id, to string, by Actor, data FlowEventData) (*Flow, error) {
	var f *Flow
	wroteEvent := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if f, err = take[Flow](tx.Clauses(lockForUpdate(tx)...), orgID, id, "flow "+id); err != nil {
			return err
		}
		if f.Status != FlowOpen {
			return apperr.New(apperr.InvalidState, "the flow is already %s", f.Status)
		}
		detail := ""
		if by.ID != f.StartedBy {
			if to == FlowCompleted {
				return apperr.New(apperr.Forbidden, "only whoever started the flow may complete it")
			}
			if !by.Administrator {
				return apperr.New(apperr.Forbidden, "only whoever started the flow, an owner or an administrator may cancel it")
			}
			detail = AsAdministrator
		}
		now := Now()
		f.Status, f.UpdatedAt = to, now
		if to == FlowCompleted {
			f.CompletedAt = &now
		} else {
			f.CancelledAt = &now
		}
		if err := tx.Save(f).Error; err != nil {
			return err
		}
		entry := flowAudit(f, 2, to, by, now)
		entry.Detail = detail
		if err := writeAudit(tx, entry); err != nil || to != FlowCompleted {
			return err
		}
		d, err := flowDetail(tx, f)
		if err != nil {
			return err
		}
		b, err := data(d)
		if err != nil {
			return err
		}
		wroteEvent = true
		return tx.Create(&Event{ID: newID(ids.Event), OrganizationID: orgID, Kind: events.FlowCompleted, SubjectType: "flow",
			SubjectID: f.ID, Data: b, CreatedAt: now}).Error
	})
	if wroteEvent {
		s.changes.EventWritten()
	}
	return f, err
}

// AsAdministrator is the audit detail of an owner or administrator
// withdrawing what someone else started.
const AsAdministrator = "as an owner or administrator, for whoever started it"

func flowAudit(f *Flow, seq int, action string, by Actor, at time.Time) *AuditEntry {
	return &AuditEntry{ID: newID(ids.Audit), OrganizationID: f.OrganizationID, FlowID: &f.ID, SubjectType: "flow",
		SubjectID: f.ID, Seq: seq, Action: action, ActorID: by.ID, ActorName: by.Name, At: at}
}

// requireOpenFlow refuses attaching to a flow that is missing, of another
// organisation, completed or cancelled.
func requireOpenFlow(tx *gorm.DB, orgID, id string) error {
	f, err := take[Flow](tx, orgID, id, "flow "+id)
	if apperr.Is(err, apperr.NotFound) {
		return apperr.Field(apperr.InvalidRequest, "flowId", "flow %s not found", id)
	}
	if err != nil {
		return err
	}
	if f.Status != FlowOpen {
		return apperr.Field(apperr.InvalidState, "flowId", "flow %s is %s; requests can attach to open flows only", id, f.Status)
	}
	return nil
}
