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
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Deps are what the service needs.
type Deps = requests.Deps

// Service runs the approval kind's operations. Build one per process and
// share it between the adapters, so long-polls hear of every change. What
// every kind does alike comes from its requests.Lifecycle.
type Service struct {
	*requests.Lifecycle[Approval]
	store     Store
	log       *slog.Logger
	netPolicy *netguard.Policy
}

// Store is what an approval reads and writes beside what every kind
// does: the people it asks and the organisation's rules and model screen
// that shape it, and the sign-in-free decision links.
type Store interface {
	requests.Directory
	// Its records (Records).
	models.RequestsHost
	ActiveMemberIDs(ctx context.Context, orgID string, roles ...string) ([]string, error)
	GetOrganization(ctx context.Context, id string) (*models.Organization, error)
	EnabledRules(ctx context.Context, orgID string) ([]models.Rule, error)
	ModelScreenOn(ctx context.Context, orgID string) (bool, error)
	OpenDecisionLink(ctx context.Context, approvalID, token string) (*models.OpenedDecisionLink, error)
	UseDecisionLink(ctx context.Context, l *models.DecisionLink) error
}

// New returns the service.
func New(d Deps) *Service {
	d = d.Filled()
	s := &Service{store: d.Store, log: d.Logger, netPolicy: d.NetPolicy}
	s.Lifecycle = requests.NewLifecycle[Approval](d, Names, Records(d.Store), s)
	return s
}

// Head is what the shared paths read of an approval (requests.Kind).
func (s *Service) Head(a *Approval) requests.Head {
	return requests.HeadOf(&a.RequestBase, a.ApproverIDs, a.ApproverVia.V)
}

// Pending pages through the pending approvals who may decide, newest
// first.
func (s *Service) Pending(ctx context.Context, orgID string, who models.Actor, p models.Page) ([]Approval, string, error) {
	if err := accounts.NeedPerson(who, "an inbox"); err != nil {
		return nil, "", err
	}
	return Records(s.store).List(ctx, orgID, "", Filter{RequestFilter: models.RequestFilter{Status: states.Pending}, WaitingOn: who.ID}, p)
}
