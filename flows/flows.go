// Package flows groups the requests of one job: start a flow, read it with
// its members and timeline, and complete or cancel it. Who may finish a
// flow and what is audited are the store's one transaction
// (models.FlowStore.FinishFlow); this service gives it the title as kept and
// flow.completed's data, so every adapter finishes a flow alike.
package flows

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/wire"
)

// Service starts, reads and finishes flows.
type Service struct {
	store   *models.FlowStore
	reports *reports.Service
	baseURL string
}

// New returns the service; reports says which of a flow's reports a
// reader may see, baseURL goes into the members' addresses in
// flow.completed's data.
func New(store *models.FlowStore, reports *reports.Service, baseURL string) *Service {
	return &Service{store: store, reports: reports, baseURL: baseURL}
}

// CreateInput is the create body with its limits, checked where it is
// bound.
type CreateInput struct {
	Title      string  `json:"title" validate:"required,notblank,max=200"`
	ExternalID *string `json:"externalId" validate:"omitempty,max=255" nullable:"true"`
}

// Create starts an open flow, started by p; its title is kept trimmed.
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput) (*models.Flow, error) {
	return s.store.CreateFlow(ctx, p.Organization.ID, strings.TrimSpace(in.Title), in.ExternalID, p)
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
	return s.store.FinishFlow(ctx, p.Organization.ID, id, to, p,
		func(d *models.FlowDetail) ([]byte, error) { return json.Marshal(wire.NewFlow(d, s.baseURL)) })
}
