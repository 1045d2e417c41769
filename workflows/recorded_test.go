package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// TestTransitionsAreWrittenOnlyOnceRecorded checks, at the moment each
// transition is written, that Temporal's history already holds what made
// it: the start, the Update's acceptance, or the expiry timer's firing. A
// write made inside the workflow task (a local activity) comes before the
// task is recorded, so a crash there left the database saying what the
// workflow never did; only "created", whose cause is the start, is written
// there.
func TestTransitionsAreWrittenOnlyOnceRecorded(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ts.GetDefaultNamespace(), SearchAttributes: workflows.SearchAttributes()})
	require.NoError(t, err)

	var mu sync.Mutex
	unrecorded := map[string][]string{} // approval id → actions written before recorded
	written := map[string][]string{}
	ts.NewWorker(workflows.TaskQueue, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(approvals.Workflow, workflow.RegisterOptions{Name: approvals.WorkflowType})
		r.RegisterActivityWithOptions(func(ctx context.Context, tr approvals.Transition) error {
			started, accepted, fired := recorded(ctx, c, approvals.WorkflowID(tr.RequestID))
			inTask := activity.GetInfo(ctx).IsLocalActivity
			mu.Lock()
			defer mu.Unlock()
			updates := 0
			for _, a := range written[tr.RequestID] {
				if a != workflows.ActionCreated && a != workflows.ActionExpired {
					updates++
				}
			}
			switch tr.Action {
			case workflows.ActionCreated:
				if !started || !inTask {
					unrecorded[tr.RequestID] = append(unrecorded[tr.RequestID], tr.Action)
				}
			case workflows.ActionExpired:
				if !fired || inTask {
					unrecorded[tr.RequestID] = append(unrecorded[tr.RequestID], tr.Action)
				}
			default:
				if accepted <= updates || inTask {
					unrecorded[tr.RequestID] = append(unrecorded[tr.RequestID], tr.Action)
				}
			}
			written[tr.RequestID] = append(written[tr.RequestID], tr.Action)
			return nil
		}, activity.RegisterOptions{Name: approvals.ActivityPersist})
		r.RegisterActivityWithOptions(func(context.Context, approvals.EmailApproversInput) error { return nil },
			activity.RegisterOptions{Name: approvals.ActivityEmailApprovers})
		r.RegisterActivityWithOptions(func(context.Context, approvals.EmailAnswerInput) error { return nil },
			activity.RegisterOptions{Name: approvals.ActivityEmailAnswer})
	})

	run := func(id string, expiresIn time.Duration, updates ...recordStep) string {
		in := recordedApproval()
		in.ApprovalID, in.ExpiresAt = id, time.Now().Add(expiresIn)
		wf, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: approvals.WorkflowID(id), TaskQueue: workflows.TaskQueue},
			approvals.WorkflowType, in)
		require.NoError(t, err)
		for _, u := range updates {
			h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: wf.GetID(), UpdateName: u.update,
				Args: []any{workflowtest.Addressed(id, u.arg)}, WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, h.Get(ctx, nil))
		}
		var final approvals.State
		require.NoError(t, wf.Get(ctx, &final))
		return final.Status
	}
	assert.Equal(t, states.Approved, run("apr_decided", time.Hour,
		recordStep{update: approvals.UpdateAsk, arg: approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}},
		recordStep{update: approvals.UpdateAnswer, arg: approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme"}},
		recordStep{update: approvals.UpdateDecide, arg: approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: approvals.DecisionApprove}}))
	assert.Equal(t, states.Expired, run("apr_expired", 2*time.Second))

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{workflows.ActionCreated, approvals.ActionAsked, approvals.ActionAnswered, approvals.ActionApproved},
		written["apr_decided"])
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionExpired}, written["apr_expired"])
	assert.Empty(t, unrecorded, "transitions written before Temporal recorded their cause, or inside the workflow task (but created)")
}

// recorded tells whether the workflow's history holds its start, counts
// the Updates it has accepted and tells whether a timer has fired.
func recorded(ctx context.Context, c client.Client, workflowID string) (started bool, accepted int, fired bool) {
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return started, accepted, fired
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			started = true
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			accepted++
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			fired = true
		}
	}
	return started, accepted, fired
}
