// Package flows groups the requests of one job: start a flow, read it with
// its members and timeline, and complete or cancel it. Each change is one
// transaction of this service's: the flow, its audit entry and, for a
// completion, flow.completed, under the flow's row lock; who may finish a
// flow is decided here, so every adapter finishes a flow alike.
package flows

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Service starts, reads and finishes flows.
type Service struct {
	store   *models.FlowStore
	reports Readable
	baseURL string
}

// Readable says which reports a reader may see (the reports service);
// an interface, so the reports service, which checks that a report joins
// an open flow (RequireOpen), may import this package.
type Readable interface {
	VisibleOf(ctx context.Context, who models.Actor, rs []models.Report) ([]models.Report, error)
}

// New returns the service; reports says which of a flow's reports a
// reader may see, baseURL goes into the members' addresses in
// flow.completed's data.
func New(store *models.FlowStore, reports Readable, baseURL string) *Service {
	return &Service{store: store, reports: reports, baseURL: baseURL}
}

// Getter reads a flow, in ctx's transaction when it carries one
// (models.Store).
type Getter interface {
	GetFlow(ctx context.Context, orgID, id string) (*models.Flow, error)
}

// RequireOpen refuses attaching a record (a request, a report, a gate
// check) to the organisation's flow flowID unless it is open, read in
// ctx's transaction; a record in no flow (nil) attaches to none.
func RequireOpen(ctx context.Context, s Getter, orgID string, flowID *string) error {
	if flowID == nil {
		return nil
	}
	id := *flowID
	f, err := s.GetFlow(ctx, orgID, id)
	if apperr.Is(err, apperr.NotFound) {
		return apperr.Field(apperr.InvalidRequest, "flowId", "flow %s not found", id)
	}
	if err != nil {
		return err
	}
	if f.Status != models.FlowOpen {
		return apperr.Field(apperr.InvalidState, "flowId", "flow %s is %s; requests can attach to open flows only", id, f.Status)
	}
	return nil
}

// CreateInput is the create body with its limits, checked where it is
// bound.
type CreateInput struct {
	Title      string  `json:"title" validate:"required,notblank,max=200"`
	ExternalID *string `json:"externalId" validate:"omitempty,max=255" nullable:"true"`
}

// Create starts an open flow, started by p; its title is kept trimmed.
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput) (*models.Flow, error) {
	f := models.NewFlow(p.Organization.ID, strings.TrimSpace(in.Title), in.ExternalID, p)
	return f, s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.InsertFlow(ctx, f); err != nil {
			return err
		}
		return s.store.Audit(ctx, models.FlowAudit(f, 1, "created", p, f.CreatedAt))
	})
}

// reportSubject is the subject type of a report's audit entries.
const reportSubject = "report"

// Detail is one of who's organisation's flows with its members and
// timeline, as who may see them: a report they may not see is left out,
// with its steps (its title, its comments and whom it is shared with).
func (s *Service) Detail(ctx context.Context, who models.Actor, id string) (*models.FlowDetail, error) {
	d, err := s.store.GetFlowDetail(ctx, who.OrgID(), id)
	if err != nil {
		return nil, err
	}
	all := len(d.Reports)
	if d.Reports, err = s.reports.VisibleOf(ctx, who, d.Reports); err != nil || len(d.Reports) == all {
		return d, err
	}
	seen := map[string]bool{}
	for _, r := range d.Reports {
		seen[r.ID] = true
	}
	d.Timeline = slices.DeleteFunc(d.Timeline, func(e models.AuditEntry) bool {
		return e.SubjectType == reportSubject && !seen[e.SubjectID]
	})
	return d, nil
}

// Complete completes an open flow: only whoever started it may. Receivers
// get flow.completed with the flow as completed.
func (s *Service) Complete(ctx context.Context, p models.Actor, id string) (*models.Flow, error) {
	return s.finish(ctx, p, id, models.FlowCompleted)
}

// Cancel cancels an open flow: whoever started it, or an owner or
// administrator for them.
func (s *Service) Cancel(ctx context.Context, p models.Actor, id string) (*models.Flow, error) {
	return s.finish(ctx, p, id, models.FlowCancelled)
}

func (s *Service) finish(ctx context.Context, p models.Actor, id, to string) (*models.Flow, error) {
	var f *models.Flow
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if f, err = s.store.LockFlow(ctx, p.Organization.ID, id); err != nil {
			return err
		}
		detail, err := mayFinish(f, p, to)
		if err != nil {
			return err
		}
		now := models.Now()
		f.Finish(to, now)
		if err := s.store.SaveFlow(ctx, f); err != nil {
			return err
		}
		entry := models.FlowAudit(f, 2, to, p, now)
		entry.Detail = detail
		if err := s.store.Audit(ctx, entry); err != nil || to != models.FlowCompleted {
			return err
		}
		d, err := s.store.DetailOf(ctx, f)
		if err != nil {
			return err
		}
		data, err := json.Marshal(wire.NewFlow(d, s.baseURL))
		if err != nil {
			return err
		}
		return s.store.Emit(ctx, &models.Event{OrganizationID: f.OrganizationID, Kind: events.FlowCompleted,
			SubjectType: "flow", SubjectID: f.ID, Data: data, CreatedAt: now})
	})
	return f, err
}

// mayFinish refuses finishing f unless it is open and p may take it to
// to: its starter, or for a cancellation an owner or administrator in
// their stead (the audit detail it returns says so).
func mayFinish(f *models.Flow, p models.Actor, to string) (detail string, err error) {
	if f.Status != models.FlowOpen {
		return "", apperr.New(apperr.InvalidState, "the flow is already %s", f.Status)
	}
	if p.ID == f.StartedBy {
		return "", nil
	}
	if to == models.FlowCompleted {
		return "", apperr.New(apperr.Forbidden, "only whoever started the flow may complete it")
	}
	if !p.Administrator {
		return "", apperr.New(apperr.Forbidden, "only whoever started the flow, an owner or an administrator may cancel it")
	}
	return models.AsAdministrator, nil
}
