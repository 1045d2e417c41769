package admin

import (
	"context"
	"time"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// System is what an administrator's System page shows of requests
// waiting and of the instance's outbox: the same figures, from the same
// store queries, as the metrics (assent_requests_open and its kin), for
// this organisation.
type System struct {
	Open []models.OpenCount
	// Oldest are the requests that have waited longest, oldest first.
	Oldest []Waiting
	// OutboxLag is the instance's: how long the oldest undelivered event
	// has waited for the dispatcher.
	OutboxLag time.Duration
}

// Waiting is one long-waiting request; Stuck says it is overdue (its
// workflow should have ended it). WorkflowID names its workflow, for
// the operator's link to the Temporal UI.
type Waiting struct {
	models.OpenRequest
	Stuck      bool
	WorkflowID string
}

// oldestShown is how many of the longest-waiting requests the page lists.
const oldestShown = 10

// System reads the organisation's open requests and the outbox's lag.
func (s *Service) System(ctx context.Context, orgID string) (*System, error) {
	open, err := s.store.OpenRequests(ctx, orgID)
	if err != nil {
		return nil, err
	}
	oldest, err := s.store.OldestOpen(ctx, orgID, oldestShown)
	if err != nil {
		return nil, err
	}
	lag, err := s.store.OutboxLag(ctx)
	if err != nil {
		return nil, err
	}
	sys := &System{Open: open, OutboxLag: lag}
	now := models.Now()
	for _, r := range oldest {
		sys.Oldest = append(sys.Oldest, Waiting{OpenRequest: r, Stuck: models.Overdue(r.ExpiresAt, now),
			WorkflowID: workflows.RequestWorkflowID(r.Kind, r.ID)})
	}
	return sys, nil
}
