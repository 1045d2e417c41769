// Package app is the composition root: Build is the one place the domain
// services are built. A process builds them once and hands the same
// Services to the API, the pages and the reconciler, so a decision made
// on a page wakes a long-poll on the API; tests build them through Build
// too.
package app

import (
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/approvals"
	approvalpage "github.com/assent-hq/assent/approvals/page"
	approvalrest "github.com/assent-hq/assent/approvals/rest"
	"github.com/assent-hq/assent/collections"
	collectionpage "github.com/assent-hq/assent/collections/page"
	collectionrest "github.com/assent-hq/assent/collections/rest"
	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/wiring"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/push"
	"github.com/assent-hq/assent/receipts"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	reviewpage "github.com/assent-hq/assent/reviews/page"
	reviewrest "github.com/assent-hq/assent/reviews/rest"
	"github.com/assent-hq/assent/slackapp"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/webhooks"
)

// Deps are what the services are built from.
type Deps struct {
	Store *models.Store
	// Temporal runs the workflows; without it (nil) what needs a workflow
	// answers apperr.Unavailable when called.
	Temporal client.Client
	// Blobs and Scanner publish reports; nil where nothing is published
	// (the worker, the admin command).
	Blobs   *blobstore.Store
	Scanner *publishscan.Scanner
	// Logger is slog.Default when nil.
	Logger *slog.Logger
	// BaseURL is the public address links and event data start with.
	BaseURL string
	// NetPolicy says where requests to addresses people give may go
	// (receivers, callbacks, Slack, push services); nil is netguard.Public.
	NetPolicy *netguard.Policy
	// SlackAPIURL is Slack's Web API; "" is Slack's own.
	SlackAPIURL string
}

// Services are the domain services of one process. Every field is set by
// Build; each adapter takes those it calls (API, Web) and refuses them
// with one missing.
type Services struct {
	Approvals   *approvals.Service
	Collections *collections.Service
	Reports     *reports.Service
	Reviews     *reviews.Service
	Comments    *comments.Service
	Evidence    *evidence.Service
	Gate        *gate.Service
	Receipts    *receipts.Service
	Webhooks    *webhooks.Service
	Flows       *flows.Service
	Admin       *admin.Service
	Slack       *slackapp.Service
	Accounts    *accounts.Service
	Push        *push.Service
	Idempotency *idempotency.Service
	Instance    *instance.Service
	History     *requests.History
	Delegations *delegations.Service
	// kinds are the request kinds' services, listed once.
	kinds []kind
}

// Build builds every service from d.
func Build(d Deps) *Services {
	if d.NetPolicy == nil {
		d.NetPolicy = netguard.Public
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	a := approvals.New(approvals.Deps{Store: d.Store, Temporal: d.Temporal, Logger: d.Logger, NetPolicy: d.NetPolicy})
	col := collections.New(collections.Deps{Store: d.Store, Temporal: d.Temporal, Logger: d.Logger, NetPolicy: d.NetPolicy})
	rep := reports.New(reports.Deps{Store: d.Store, Temporal: d.Temporal, Blobs: d.Blobs, Scanner: d.Scanner, Logger: d.Logger, BaseURL: d.BaseURL})
	rev := reviews.New(requests.Deps{Store: d.Store, Temporal: d.Temporal, Logger: d.Logger, NetPolicy: d.NetPolicy}, rep)
	byKind := &Services{Approvals: a, Collections: col, Reviews: rev} // what requestKinds' rows read
	kinds := parts(byKind, func(k requestKind) func(*Services) kind { return k.service })
	adm := admin.New(d.Store, each[admin.Asked](kinds)...).WithNetPolicy(d.NetPolicy)
	exports := &evidence.Service{Store: d.Store, BaseURL: d.BaseURL,
		Kinds: parts(byKind, func(k requestKind) func(*Services) evidence.Kind { return k.evidence })}
	acc := accounts.New(d.Store)
	s := &Services{
		Approvals:   a,
		Collections: col,
		Reports:     rep,
		Reviews:     rev,
		Comments:    comments.New(comments.Deps{Store: d.Store, Blobs: d.Blobs, Reports: rep, Logger: d.Logger, BaseURL: d.BaseURL}),
		Evidence:    exports,
		Gate:        gate.New(d.Store, a, d.Logger, d.BaseURL),
		Receipts:    receipts.New(d.Store, d.BaseURL),
		Webhooks:    webhooks.New(d.Store.DeliveryStore, d.NetPolicy, d.BaseURL),
		Flows:       flows.New(d.Store.FlowStore, rep, d.BaseURL),
		Admin:       adm,
		Slack: slackapp.New(slackapp.Deps{Admin: adm, Accounts: acc, Approvals: a, BaseURL: d.BaseURL, APIURL: d.SlackAPIURL,
			NetPolicy: d.NetPolicy, Logger: d.Logger}),
		Accounts:    acc,
		Push:        push.New(d.Store.PushStore, d.NetPolicy),
		Idempotency: idempotency.New(d.Store.IdempotencyStore),
		Instance:    instance.New(d.Store.SigningKeyStore, d.Temporal, blobChecker(d.Blobs)),
		History:     requests.NewHistory(d.Store),
		Delegations: delegations.New(d.Store, d.Logger, each[delegations.Asker](kinds)...),
		kinds:       kinds,
	}
	// A request kind's row that reads a service byKind lacks would leave
	// a nil in kinds: caught here, at start.
	wiring.Require("app", s)
	return s
}

// A requestKind is a request kind as the processes are built of it: what
// the worker runs of it, and, each made from the services, its service
// (as what spans the kinds reaches it), its requests in evidence exports,
// its page and its routes.
type requestKind struct {
	worker   requests.Worker
	service  func(*Services) kind
	evidence func(*Services) evidence.Kind
	page     func(*Services) web.KindPage
	routes   func(*Services) api.Kind
}

// requestKinds are the request kinds, each registered once, in the order
// the inboxes break ties and exports list them.
var requestKinds = []requestKind{
	{approvals.Worker, func(s *Services) kind { return s.Approvals },
		func(s *Services) evidence.Kind { return evidence.KindOf(s.Approvals, approvals.NewWire) },
		func(s *Services) web.KindPage { return approvalpage.New(s.Approvals, s.Gate) },
		func(s *Services) api.Kind { return approvalrest.New(s.Approvals) }},
	{collections.Worker, func(s *Services) kind { return s.Collections },
		func(s *Services) evidence.Kind { return evidence.KindOf(s.Collections, collections.NewWire) },
		func(s *Services) web.KindPage { return collectionpage.New(s.Collections) },
		func(s *Services) api.Kind { return collectionrest.New(s.Collections) }},
	{reviews.Worker, func(s *Services) kind { return s.Reviews },
		func(s *Services) evidence.Kind { return evidence.KindOf(s.Reviews, reviews.NewWire) },
		func(s *Services) web.KindPage { return reviewpage.New(s.Reviews, s.Reports) },
		func(s *Services) api.Kind { return reviewrest.New(s.Reviews) }},
}

// Workers are what the worker runs of each request kind (worker.Deps).
func Workers() []requests.Worker {
	out := make([]requests.Worker, len(requestKinds))
	for i, k := range requestKinds {
		out[i] = k.worker
	}
	return out
}

// parts are one part of every request kind, made from s.
func parts[T any](s *Services, part func(requestKind) func(*Services) T) []T {
	out := make([]T, len(requestKinds))
	for i, k := range requestKinds {
		out[i] = part(k)(s)
	}
	return out
}

// kind is a request kind's service, as what spans the kinds reaches it:
// removing a guest, handing a delegation over, starting lost workflows.
type kind interface {
	admin.Asked
	delegations.Asker
	requests.Owned
}

// each is kinds as what one of those sees of them.
func each[T any](kinds []kind) []T {
	out := make([]T, len(kinds))
	for i, k := range kinds {
		out[i] = k.(T)
	}
	return out
}

// Owned are the kinds of record whose workflows the reconciler starts,
// and the delegations whose time has come.
func (s *Services) Owned() []requests.Owned {
	return append(each[requests.Owned](s.kinds), s.Reports, s.Reports.Schedules(), s.Reports.Sends(), s.Delegations)
}

// API is what the API calls of s.
func (s *Services) API() api.Services {
	out := api.Services{Reports: s.Reports,
		Comments: s.Comments, Evidence: s.Evidence, Gate: s.Gate, Receipts: s.Receipts, Webhooks: s.Webhooks, Flows: s.Flows,
		Admin: s.Admin, Slack: s.Slack, Accounts: s.Accounts, Idempotency: s.Idempotency, Instance: s.Instance,
		Delegations: s.Delegations}
	out.Kinds = parts(s, func(k requestKind) func(*Services) api.Kind { return k.routes })
	return out
}

// Web is what the pages call of s.
func (s *Services) Web() web.Services {
	out := web.Services{Accounts: s.Accounts, Push: s.Push, History: s.History, Comments: s.Comments, Reports: s.Reports, Webhooks: s.Webhooks,
		Admin: s.Admin, Slack: s.Slack, Gate: s.Gate, Delegations: s.Delegations}
	out.Kinds = parts(s, func(k requestKind) func(*Services) web.KindPage { return k.page })
	return out
}

// blobChecker is blobs as readiness asks it; nil stays nil, so a process
// without report files is not checked for them.
func blobChecker(b *blobstore.Store) instance.Checker {
	if b == nil {
		return nil
	}
	return b
}
