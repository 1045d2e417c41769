// Package start starts the workflow that owns a record. The API calls it at
// creation and the worker's reconciler calls it for records whose start
// was lost, so both start the same workflow the same way.
package start

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// Approval starts the workflow of rec. A workflow that already exists for
// rec counts as started: its id is the record's id.
func Approval(ctx context.Context, c client.Client, rec *models.Approval) error {
	in, err := ApprovalInput(rec)
	if err != nil {
		return err
	}
	attrs := []temporal.SearchAttributeUpdate{
		workflows.SearchOrganization.ValueSet(rec.OrganizationID),
		workflows.SearchKind.ValueSet("approval"),
		workflows.SearchStatus.ValueSet(rec.Status),
		workflows.SearchRisk.ValueSet(rec.Risk),
	}
	if rec.ExternalID != nil {
		attrs = append(attrs, workflows.SearchExternalID.ValueSet(*rec.ExternalID))
	}
	return once(ctx, c, client.StartWorkflowOptions{
		ID:                    workflows.ApprovalWorkflowID(rec.ID),
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
	}, workflows.Approval, in)
}

// ApprovalInput is what the workflow of rec needs.
func ApprovalInput(rec *models.Approval) (workflows.ApprovalInput, error) {
	in := workflows.ApprovalInput{
		ApprovalID:        rec.ID,
		OrganizationID:    rec.OrganizationID,
		Risk:              rec.Risk,
		ExpiresAt:         rec.ExpiresAt,
		RequiredApprovals: rec.RequiredApprovals,
		ApproverIDs:       rec.ApproverIDs,
		Requester:         rec.Requester,
		EditableFields:    rec.EditableFields,
		ReasonRequired:    len(rec.Concerns.V) > 0,
	}
	if rec.ExternalID != nil {
		in.ExternalID = *rec.ExternalID
	}
	if ids.HasPrefix(rec.Requester, ids.Member) {
		in.RequesterMemberID = rec.Requester
	}
	if len(rec.Input) > 0 {
		if err := json.Unmarshal(rec.Input, &in.Input); err != nil {
			return in, fmt.Errorf("approval %s input: %w", rec.ID, err)
		}
	}
	return in, nil
}

// Delivery starts the workflow of a delivery's current send; an existing
// one counts as started, so an event is never sent twice to a receiver by
// our doing.
func Delivery(ctx context.Context, c client.Client, d *models.Delivery, retryUnit time.Duration) error {
	return once(ctx, c, client.StartWorkflowOptions{ID: workflows.DeliveryWorkflowID(d.ID, d.Sends)},
		workflows.Delivery, workflows.DeliveryInput{DeliveryID: d.ID, RetryUnit: retryUnit})
}

// once starts a workflow that must exist at most once, ever, for its id: a
// workflow already started under it counts as started. Eager start hands
// the first task straight to a worker in this process (assent dev), saving
// a round trip.
func once(ctx context.Context, c client.Client, o client.StartWorkflowOptions, wf, arg any) error {
	o.TaskQueue = workflows.TaskQueue
	o.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	o.EnableEagerStart = true
	_, err := c.ExecuteWorkflow(ctx, o, wf, arg)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start workflow %s: %w", o.ID, err)
	}
	return nil
}
