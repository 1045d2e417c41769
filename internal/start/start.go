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
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.ApprovalWorkflowID(rec.ID),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Where this process also runs the worker (assent dev), the first
		// workflow task comes back with the start: one round trip fewer.
		EnableEagerStart:      true,
		TypedSearchAttributes: temporal.NewSearchAttributes(attrs...),
	}, workflows.Approval, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start approval workflow %s: %w", rec.ID, err)
	}
	return nil
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

// Delivery starts the workflow of one delivery; an existing one counts as
// started, so an event is never sent twice to a receiver by our doing.
func Delivery(ctx context.Context, c client.Client, deliveryID string, retryUnit time.Duration) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.DeliveryWorkflowID(deliveryID),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		EnableEagerStart:         true,
	}, workflows.Delivery, workflows.DeliveryInput{DeliveryID: deliveryID, RetryUnit: retryUnit})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start delivery workflow %s: %w", deliveryID, err)
	}
	return nil
}
