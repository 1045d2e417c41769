// Package requests is what every kind of request (approvals,
// collections, reviews) shares: the Lifecycle each kind's service embeds
// (create bound to its claim, get, view, wait, cancel, Updates, the
// reconciler's start), resolving the people a request names, starting the
// one workflow that owns each record exactly once, starting the workflows
// whose start was lost, and waiting for a record to settle.
package requests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/workflows"
)

// StartOnce starts a workflow that must exist at most once, ever, for its
// id: a workflow already started under it counts as started, so a retried
// create or a reconciler racing the API starts nothing twice. Eager start
// hands the first task straight to a worker in this process (assent dev),
// saving a round trip. The outbox dispatcher starts deliveries the same way.
// workflowType is the name the worker registers it under (workflows.
// WorkflowReview, …): a function would be named by its own short name,
// which two kinds' Workflow functions share.
func StartOnce(ctx context.Context, c client.Client, o client.StartWorkflowOptions, workflowType string, arg any) error {
	if c == nil {
		return errNoTemporal
	}
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	o.TaskQueue = workflows.TaskQueue
	o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	o.EnableEagerStart = true
	_, err := c.ExecuteWorkflow(ctx, o, workflowType, arg)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start workflow %s: %w", o.ID, err)
	}
	return nil
}

// Attributes are the search attributes a request's workflow starts with,
// so an operator finds it in the Temporal UI by organisation, kind, status
// and external id; extra adds the kind's own (an approval's risk).
func Attributes(orgID, kind, status string, externalID *string, extra ...temporal.SearchAttributeUpdate) temporal.SearchAttributes {
	attrs := append([]temporal.SearchAttributeUpdate{
		workflows.SearchOrganization.ValueSet(orgID),
		workflows.SearchKind.ValueSet(kind),
		workflows.SearchStatus.ValueSet(status),
	}, extra...)
	if externalID != nil {
		attrs = append(attrs, workflows.SearchExternalID.ValueSet(*externalID))
	}
	return temporal.NewSearchAttributes(attrs...)
}

// Owned is a kind of request whose records each have one workflow.
type Owned interface {
	// Kind names the kind in logs: "approval".
	Kind() string
	// StartUnowned starts the workflows of open records created before
	// olderThan that no workflow has taken up, at most batch of them, and
	// returns how many it started.
	StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error)
}

// StartTimeout bounds a workflow start, so that a creating request gives
// up on its record well within ReconcileGrace.
const StartTimeout = 10 * time.Second

// ReconcileGrace is how old an unowned record must be before the
// reconciler starts its workflow: younger ones may still be in their
// creating request, which takes the record back if its start fails.
const ReconcileGrace = 3 * StartTimeout

// ReconcileInterval is how often the reconciler looks, so a request whose
// creating process died runs at most ReconcileGrace + ReconcileInterval
// after it was written, expiring at once if its time has passed. (A retry
// with the same Idempotency-Key starts it sooner.)
const ReconcileInterval = 10 * time.Second

// Reconcile starts, for each kind, the workflows of records whose creating
// process died between writing the record and starting its workflow; at
// most batch per kind. It returns how many it started.
func Reconcile(ctx context.Context, now time.Time, batch int, kinds ...Owned) (int, error) {
	total := 0
	for _, k := range kinds {
		n, err := k.StartUnowned(ctx, now.Add(-ReconcileGrace), batch)
		total += n
		if err != nil {
			return total, fmt.Errorf("reconcile %ss: %w", k.Kind(), err)
		}
	}
	return total, nil
}

// RunReconciler reconciles at start and then every ReconcileInterval until
// ctx ends.
func RunReconciler(ctx context.Context, log *slog.Logger, kinds ...Owned) {
	for {
		if n, err := Reconcile(ctx, time.Now(), 500, kinds...); err != nil {
			log.Error("reconcile unowned requests", "error", err)
		} else if n > 0 {
			log.Warn("started workflows for requests that had none", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(ReconcileInterval):
		}
	}
}
