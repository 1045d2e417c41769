package payloadcodec

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/assent-hq/assent/internal/secretkey"
)

// The namespace's marker is a workflow that never runs: its memo names, in
// clear, the id of the key the instance using the namespace seals
// payloads with (an id is already written in clear beside every payload;
// it does not reveal the key). A workflow rather than the namespace's own
// data, because recording it needs only what every worker may do (start,
// describe, terminate a workflow), where UpdateNamespace needs a namespace
// administrator and is refused on Temporal Cloud. Its task queue has no
// worker, so it stays running, with no timeout, until moved.
const (
	MarkerWorkflowID = "assent-key-marker"
	markerType       = "AssentKeyMarker"
	markerQueue      = "assent-key-marker"
	markerMemo       = "assentKeyId"
)

// MismatchError is a namespace marked for a key the ring does not hold:
// another instance, with another ASSENT_SECRET_KEY, uses it.
type MismatchError struct {
	Namespace string
	// Marked is the id of the namespace's key; Ring the ring's ids.
	Marked string
	Ring   []string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("Temporal namespace %q belongs to another Assent instance: its payloads are sealed under key %s, "+
		"and this process's %s holds %s. Two instances on one namespace and task queue take each other's workflows. "+
		"Give this instance its own namespace (ASSENT_TEMPORAL_NAMESPACE) or its own Temporal server (ASSENT_TEMPORAL_ADDRESS), "+
		"or set %s to the other instance's key. While rotating keys, keep the previous key in the ring (second) "+
		"until a process has started with the new key first (workflow %s in that namespace names the key)",
		e.Namespace, e.Marked, secretkey.Env, strings.Join(e.Ring, ", "), secretkey.Env, MarkerWorkflowID)
}

// ReadMarker returns the id of the key the client's namespace is marked
// for, "" when it has no marker.
func ReadMarker(ctx context.Context, c client.Client) (string, error) {
	id, _, err := readMarker(ctx, c)
	return id, err
}

// CheckMarker is nil when the client's namespace has no marker or one the
// ring holds; namespace names it in the error.
func CheckMarker(ctx context.Context, c client.Client, namespace string, ring *secretkey.Ring) error {
	marked, err := ReadMarker(ctx, c)
	if err != nil {
		return err
	}
	if marked != "" && !ring.Has(marked) {
		return &MismatchError{Namespace: namespace, Marked: marked, Ring: ring.IDs()}
	}
	return nil
}

func readMarker(ctx context.Context, c client.Client) (keyID, runID string, err error) {
	d, err := c.DescribeWorkflowExecution(ctx, MarkerWorkflowID, "")
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read the namespace's Assent marker (workflow %s): %w", MarkerWorkflowID, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", "", nil
	}
	p := info.GetMemo().GetFields()[markerMemo]
	if p == nil {
		return "", "", nil
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &keyID); err != nil {
		return "", "", fmt.Errorf("read the namespace's Assent marker (workflow %s): %w", MarkerWorkflowID, err)
	}
	return keyID, info.GetExecution().GetRunId(), nil
}

// ClaimMarker checks the namespace's marker at a process's start: none is
// recorded with the ring's current key; one the ring holds is accepted,
// and moved to the current key when it names an older key of the ring
// (rotation moves it); any other is a *MismatchError.
func ClaimMarker(ctx context.Context, c client.Client, namespace string, ring *secretkey.Ring) error {
	current := ring.CurrentID()
	for range 5 {
		marked, runID, err := readMarker(ctx, c)
		switch {
		case err != nil:
			return err
		case marked == current:
			return nil
		case marked != "" && !ring.Has(marked):
			return &MismatchError{Namespace: namespace, Marked: marked, Ring: ring.IDs()}
		case marked != "":
			// An older key of the ring: end that marker (that run only, so
			// a process that moved it first is not undone) and record anew.
			err := c.TerminateWorkflow(ctx, MarkerWorkflowID, runID, "the instance's current key is now "+current)
			var missing *serviceerror.NotFound
			if err != nil && !errors.As(err, &missing) {
				return fmt.Errorf("move the namespace's Assent marker to key %s: %w", current, err)
			}
			continue
		}
		memo, err := converter.GetDefaultDataConverter().ToPayload(current)
		if err != nil {
			return err
		}
		_, err = c.WorkflowService().StartWorkflowExecution(ctx, &workflowservice.StartWorkflowExecutionRequest{
			Namespace:                namespace,
			WorkflowId:               MarkerWorkflowID,
			WorkflowType:             &commonpb.WorkflowType{Name: markerType},
			TaskQueue:                &taskqueuepb.TaskQueue{Name: markerQueue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL},
			Memo:                     &commonpb.Memo{Fields: map[string]*commonpb.Payload{markerMemo: memo}},
			RequestId:                rand.Text(),
			WorkflowIdReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			WorkflowIdConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		})
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if err != nil && !errors.As(err, &started) {
			return fmt.Errorf("record the namespace's Assent marker (workflow %s): %w", MarkerWorkflowID, err)
		}
		// Started, or another process recorded one first: read it again.
	}
	return fmt.Errorf("the namespace's Assent marker (workflow %s) kept changing while this process started; "+
		"are processes with different keys starting at once?", MarkerWorkflowID)
}
