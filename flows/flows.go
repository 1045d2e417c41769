// Package flows groups the requests of one job: start a flow, read it with
// its members and timeline, and complete or cancel it. Who may finish a
// flow and what is audited are the store's one transaction
// (models.FlowStore.FinishFlow); this service gives it the title as kept and
// flow.completed's data, so every adapter finishes a flow alike.
package flows

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Service starts, reads and finishes flows.
type Service struct {
	store   *models.FlowStore
	baseURL string
}

// New returns the service; baseURL goes into the members' addresses in
// flow.completed's data.
func New(store *models.FlowStore, baseURL string) *Service {
	return &Service{store: store, baseURL: baseURL}
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

// Detail is one of the organisation's flows with its members and timeline.
func (s *Service) Detail(ctx context.Context, orgID, id string) (*models.FlowDetail, error) {
	return s.store.GetFlowDetail(ctx, orgID, id)
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
