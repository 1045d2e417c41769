// Package worker registers every workflow and activity in one place,
// prepares the Temporal namespace they need and dispatches the outbox.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/activities"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/tracing"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/workflows"
)

// Deps are what the activities need.
type Deps struct {
	Store *models.Store
	// BaseURL makes page urls in event data.
	BaseURL string
	Logger  *slog.Logger
	// NetPolicy says where deliveries may go; nil is netguard.Public.
	NetPolicy *netguard.Policy
	// Mailer emails approvers and askers; nil logs each email as not sent.
	Mailer mail.Sender
	// PushSubject is the contact the Web Push services are given with each
	// push (VAPID's sub): an https:// URL or an email address.
	PushSubject string
	// SlackAPIURL is Slack's Web API, where approval requests are posted to
	// organisations' Slack channels; "" is Slack's own.
	SlackAPIURL string
	// Deployment is the worker deployment it joins; zero is unversioned.
	Deployment Deployment
	// Kinds are the request kinds it runs (app.Workers); New panics
	// without them.
	Kinds []requests.Worker
}

// Workflow is a workflow the worker runs, by the type name its histories
// carry.
type Workflow struct {
	Name string
	Func any
}

// Workflows is every workflow the worker runs: each of kinds', and those
// of no kind. Each has a saved history that workflows' replay test
// replays (TestEveryWorkflowHasASavedHistory checks it).
func Workflows(kinds []requests.Worker) []Workflow {
	var out []Workflow
	for _, k := range kinds {
		out = append(out, Workflow{k.WorkflowType, k.Workflow})
	}
	return append(out,
		Workflow{workflows.WorkflowDelivery, workflows.Delivery},
		Workflow{workflows.WorkflowHold, workflows.PublishHold},
		Workflow{workflows.WorkflowScheduleDue, workflows.ScheduleDue},
		Workflow{workflows.WorkflowReportSend, workflows.ReportSend})
}

// WorkflowCacheSize is how many workflows a process keeps in memory
// between their tasks (the SDK's sticky cache, shared by its workers); one
// evicted replays its history at its next task. The SDK's default, 10,000,
// held about 700 MB resident per worker once that many requests were open
// (docs/benchmarks.md); each costs about 40 KB of heap.
const WorkflowCacheSize = 2000

// Activities are the structs whose methods are the worker's activities,
// each known by its method's name (workflows.Activity…): those of no kind,
// and each kind's. Deliveries and pushes reach others' servers through
// the one guarded client.
func Activities(d Deps) []any {
	if d.NetPolicy == nil {
		d.NetPolicy = netguard.Public
	}
	out := outbound.NewClient(d.NetPolicy)
	n := &notify.Notifier{Store: d.Store, Mailer: d.Mailer, BaseURL: d.BaseURL, Logger: d.Logger,
		Push: &notify.Push{HTTP: out, Subject: d.PushSubject}}
	env := requests.ActivityEnv{Store: d.Store, BaseURL: d.BaseURL, Notify: n}
	all := []any{&activities.Activities{ActivityEnv: env, HTTP: out, SlackAPIURL: d.SlackAPIURL}}
	for _, k := range d.Kinds {
		all = append(all, k.Activities(env, d.NetPolicy))
	}
	return all
}

// New returns a worker on the assent task queue with everything registered.
func New(c client.Client, d Deps) sdkworker.Worker {
	if len(d.Kinds) == 0 {
		panic("worker: no request kinds to run; pass app.Workers()")
	}
	sdkworker.SetStickyWorkflowCacheSize(WorkflowCacheSize)
	// Pollers scale with the server's hints and keep a poll open on every
	// partition of the task queue. Two fixed pollers (the default), shared
	// between the sticky and the normal queue, left a backlog of new
	// workflows dispatched at under one a second on a cluster whose serve
	// processes start them (no eager start there; docs/benchmarks.md).
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		WorkflowTaskPollerBehavior: sdkworker.NewPollerBehaviorAutoscaling(sdkworker.PollerBehaviorAutoscalingOptions{}),
		ActivityTaskPollerBehavior: sdkworker.NewPollerBehaviorAutoscaling(sdkworker.PollerBehaviorAutoscalingOptions{}),
		DeploymentOptions:          d.Deployment.options(),
	})
	for _, wf := range Workflows(d.Kinds) {
		w.RegisterWorkflowWithOptions(wf.Func, workflow.RegisterOptions{Name: wf.Name})
	}
	for _, a := range Activities(d) {
		w.RegisterActivity(a)
	}
	return w
}

// RegisterSearchAttributes adds the search attributes assent workflows
// upsert, skipping those the namespace already has. Safe to run from many
// processes at once.
func RegisterSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	op := c.OperatorService()
	existing, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := workflows.SearchAttributes()
	for name := range existing.GetCustomAttributes() {
		delete(missing, name)
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		// Temporal Cloud, or a server that limits its operator API, lets
		// only its own tools add them: say which to add there.
		var names []string
		for name, typ := range missing {
			names = append(names, fmt.Sprintf("%s (%s)", name, typ))
		}
		sort.Strings(names)
		return fmt.Errorf("the namespace %s lacks Assent's search attributes %s, and adding them was refused (%w): "+
			"where the server does not let clients add them (Temporal Cloud: tcld or its web UI), add them there and start again",
			namespace, strings.Join(names, ", "), err)
	}
	return nil
}

// Dispatcher turns outbox events into deliveries and starts their
// workflows. Several may run: PostgreSQL hands each event to one of them
// (SKIP LOCKED), SQLite serialises them.
type Dispatcher struct {
	Client client.Client
	Store  *models.Store
	Log    *slog.Logger
	// RetryUnit scales the delivery schedule; zero is one minute.
	RetryUnit time.Duration
	// Interval is the pause between empty rounds.
	Interval time.Duration
}

// Run dispatches until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := d.Round(ctx)
		if err != nil && ctx.Err() == nil {
			d.Log.Error("dispatch events", "error", err)
		}
		if n == 0 || err != nil {
			select {
			case <-ctx.Done():
			case <-d.Store.Changes().EventsWritten():
			case <-time.After(d.Interval):
			}
		}
	}
}

// Round dispatches one batch of events and starts deliveries sent again by
// an administrator or whose start was lost, returning how many it started.
// The starts run startsAtOnce at a time: each is a round trip to Temporal,
// and one after another they bounded a backlog's fan-out by its latency.
func (d *Dispatcher) Round(ctx context.Context) (int, error) {
	ds, err := webhooks.Outbox{Store: d.Store.DeliveryStore}.Dispatch(ctx, 100)
	if err != nil {
		return 0, err
	}
	lost, err := d.Store.UnstartedDeliveries(ctx, models.Now().Add(-10*time.Second), 100)
	if err != nil {
		return 0, err
	}
	var started atomic.Int64
	var g errgroup.Group
	g.SetLimit(startsAtOnce)
	for _, dl := range append(ds, lost...) {
		g.Go(func() error {
			// One that fails stays unstarted; UnstartedDeliveries
			// hands it back within seconds.
			if err := d.start(ctx, &dl); err != nil {
				return err
			}
			if err := d.Store.MarkDeliveryStarted(ctx, dl.ID); err != nil {
				return err
			}
			started.Add(1)
			return nil
		})
	}
	err = g.Wait()
	return int(started.Load()), err
}

// startsAtOnce is how many delivery workflows one dispatcher starts at a
// time.
const startsAtOnce = 8

// start starts the workflow of a delivery's current send; an existing one
// counts as started, so an event is never sent twice to a receiver by our
// doing. A fresh delivery starts in its event's trace, so the request
// that caused the event reaches the receiver.
func (d *Dispatcher) start(ctx context.Context, dl *models.Delivery) error {
	ctx = tracing.WithTraceparent(ctx, dl.Traceparent)
	return requests.StartOnce(ctx, d.Client, client.StartWorkflowOptions{ID: workflows.DeliveryWorkflowID(dl.ID, dl.Sends)},
		workflows.WorkflowDelivery, workflows.DeliveryInput{DeliveryID: dl.ID, RetryUnit: d.RetryUnit, FirstAttempt: dl.Attempts + 1})
}
