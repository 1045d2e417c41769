// Package worker registers every workflow and activity in one place and
// prepares the Temporal namespace they need.
package worker

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/assent-hq/assent/workflows"
)

// New returns a worker on the assent task queue with everything registered.
func New(c client.Client) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{})
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
