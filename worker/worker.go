// Package worker registers every workflow and activity in one place,
// prepares the Temporal namespace they need and reconciles records whose
// workflow start was lost.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/assent-hq/assent/activities"
	"github.com/assent-hq/assent/internal/start"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// Deps are what the activities need.
type Deps struct {
	Store *models.Store
	// BaseURL makes page urls in event data.
	BaseURL string
	Logger  *slog.Logger
}

// New returns a worker on the assent task queue with everything registered.
func New(c client.Client, d Deps) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
	w.RegisterWorkflow(workflows.Approval)
	w.RegisterActivity(&activities.Activities{Store: d.Store, BaseURL: d.BaseURL})
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
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}

// ReconcileGrace is how old an unowned record must be before the reconciler
// starts its workflow: younger ones may still be in their creating request.
const ReconcileGrace = time.Minute

// Reconcile starts the workflow of pending approvals that no workflow has
// taken up, such as one whose creating process died between writing the
// record and starting the workflow; at most batch per call. It returns how
// many it started.
func Reconcile(ctx context.Context, c client.Client, store *models.Store, now time.Time, batch int) (int, error) {
	recs, err := store.UnownedApprovals(ctx, now.Add(-ReconcileGrace), batch)
	if err != nil {
		return 0, err
	}
	for i := range recs {
		if err := start.Approval(ctx, c, &recs[i]); err != nil {
			return i, err
		}
	}
	return len(recs), nil
}

// RunReconciler reconciles at start and then every interval until ctx ends.
func RunReconciler(ctx context.Context, c client.Client, store *models.Store, log *slog.Logger, interval time.Duration) {
	for {
		if n, err := Reconcile(ctx, c, store, models.Now(), 500); err != nil {
			log.Error("reconcile unowned approvals", "error", err)
		} else if n > 0 {
			log.Warn("started workflows for approvals that had none", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
