// Package approvals is the approval kind's domain: creating a request
// (rules, expiry, editable fields, approvers), reading and waiting for it,
// and what people and agents do to it afterwards (decide, ask, answer,
// cancel). The adapters (api, web) bind input, call a Service and write
// output; the workflow (workflows.Approval) decides who may act and when.
package approvals

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Kind is the request kind's name in search attributes, audit entries and
// callbacks.
const Kind = events.RequestApproval

// Deps are what the service needs.
type Deps = requests.Deps

// Service runs the approval kind's operations. Build one per process and
// share it between the adapters, so long-polls hear of every change.
type Service struct {
	store     *models.Store
	temporal  client.Client
	log       *slog.Logger
	netPolicy *netguard.Policy
	records   *requests.Records[models.Approval]
}

// New returns the service.
func New(d Deps) *Service {
	d = d.Filled()
	s := &Service{store: d.Store, temporal: d.Temporal, log: d.Logger, netPolicy: d.NetPolicy}
	s.records = &requests.Records[models.Approval]{
		Kind: Kind, Open: states.Pending, Get: s.store.GetApproval, Insert: s.store.CreateApproval,
		DeleteUnstarted: s.store.DeleteUnstartedApproval, Reveal: s.store.RevealCallbackSecret,
		Start: s.Start, WorkflowID: workflows.ApprovalWorkflowID, Log: s.log,
		Statuses: s.store.ApprovalStatuses, Asked: func(r *models.Approval) []string { return r.ApproverIDs }, Unowned: s.store.UnownedApprovals,
		Head: func(a *models.Approval) requests.Head {
			return requests.Head{ID: a.ID, OrganizationID: a.OrganizationID, Status: a.Status, Started: a.Seq > 0}
		},
	}
	s.records.Watch(d.Store.Changes())
	return s
}

// Get returns one of the organisation's approvals.
func (s *Service) Get(ctx context.Context, orgID, id string) (*models.Approval, error) {
	return s.store.GetApproval(ctx, orgID, id)
}

// View returns the approval for a person on the pages: members see their
// organisation's, a guest only those asking them to act.
func (s *Service) View(ctx context.Context, person *models.Person, id string) (*models.Approval, error) {
	return s.records.View(ctx, person, id)
}

// Wait returns the approval once it has left pending, or after timeout
// (0 to requests.MaxWait) as it then is.
func (s *Service) Wait(ctx context.Context, orgID, id string, timeout time.Duration) (*models.Approval, error) {
	return s.records.Wait(ctx, orgID, id, timeout)
}

// List pages through the organisation's approvals, newest first.
func (s *Service) List(ctx context.Context, orgID string, f models.ApprovalFilter, p models.Page) ([]models.Approval, string, error) {
	if err := requests.CheckStatus(f.Status, states.Approval); err != nil {
		return nil, "", err
	}
	return s.store.ListApprovals(ctx, orgID, f, p)
}

// Waiting pages through the pending approvals who may decide, newest
// first.
func (s *Service) Waiting(ctx context.Context, orgID string, who models.Actor, p models.Page) ([]models.Approval, string, error) {
	if err := needPerson(who, "an inbox"); err != nil {
		return nil, "", err
	}
	return s.store.ListApprovals(ctx, orgID, models.ApprovalFilter{Status: states.Pending, ApproverID: who.ID}, p)
}

// Inbox is what waits on a person, most urgent first, with counts over
// the whole backlog; dueBefore sets what counts as due soon.
func (s *Service) Inbox(ctx context.Context, person *models.Person, dueBefore time.Time, limit int) (*models.Inbox, error) {
	return s.store.PendingFor(ctx, person.Organization.ID, person.ID(), dueBefore, limit)
}

// needPerson refuses an action that only a person takes when a key acts.
func needPerson(who models.Actor, what string) error {
	if !who.Person {
		return apperr.New(apperr.Forbidden, "%s belongs to a person: use a member token", what)
	}
	return nil
}
