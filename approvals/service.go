// Package approvals is the approval kind's domain: creating a request
// (rules, expiry, editable fields, approvers), reading and waiting for it,
// and what people and agents do to it afterwards (decide, ask, answer,
// cancel). The adapters (api, web) bind input, call a Service and write
// output; the workflow (Workflow) decides who may act and when.
package approvals

import (
	"context"
	"log/slog"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Kind is the request kind's name in search attributes, audit entries and
// callbacks.
const Kind = events.RequestApproval

// Deps are what the service needs.
type Deps = requests.Deps

// Service runs the approval kind's operations. Build one per process and
// share it between the adapters, so long-polls hear of every change. What
// every kind does alike comes from its requests.Lifecycle.
type Service struct {
	*requests.Lifecycle[models.Approval]
	store     *models.Store
	log       *slog.Logger
	netPolicy *netguard.Policy
}

// New returns the service.
func New(d Deps) *Service {
	d = d.Filled()
	s := &Service{store: d.Store, log: d.Logger, netPolicy: d.NetPolicy}
	s.Lifecycle = requests.NewLifecycle[models.Approval](d,
		requests.Names{Kind: Kind, Noun: "approval", Open: states.Pending, States: states.Approval, Workflow: WorkflowType}, d.Store.Approvals(), s)
	return s
}

// Head is what the shared paths read of an approval (requests.Kind).
func (s *Service) Head(a *models.Approval) requests.Head {
	return requests.HeadOf(&a.RequestBase, a.ApproverIDs, a.ApproverVia.V)
}

// WorkflowID names the workflow of the approval id.
func (s *Service) WorkflowID(id string) string { return WorkflowID(id) }

// Handover is what an approval allows of handing it over: never to its
// requester.
func (s *Service) Handover(_ context.Context, a *models.Approval) (requests.Handover, error) {
	return requests.HandoverOf(s.Head(a))
}

// List pages through the organisation's approvals, newest first.
func (s *Service) List(ctx context.Context, who models.Actor, f models.ApprovalFilter, p models.Page) ([]models.Approval, string, error) {
	if err := s.CheckStatus(f.Status); err != nil {
		return nil, "", err
	}
	f.Requester = who.ID // an externalId finds only the caller's own
	return s.store.ListApprovals(ctx, who.OrgID(), f, p)
}

// Pending pages through the pending approvals who may decide, newest
// first.
func (s *Service) Pending(ctx context.Context, orgID string, who models.Actor, p models.Page) ([]models.Approval, string, error) {
	if err := accounts.NeedPerson(who, "an inbox"); err != nil {
		return nil, "", err
	}
	return s.store.ListApprovals(ctx, orgID, models.ApprovalFilter{Status: states.Pending, WaitingOn: who.ID}, p)
}
