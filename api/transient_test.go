package api_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/worker"
	"github.com/assent-hq/assent/workflows"
)

// A decision on a request whose workflow task keeps failing (a worker
// crashed on it, or one without the key took it) is refused by Temporal
// ("Workflow Task in failed state"): the API answers 503
// service_unavailable with Retry-After, never 500.
func TestAnUpdateWhileTheWorkflowTaskFailsIsUnavailable(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		tc, ns := temporalenv.ClientIn(t)
		f := newFixtureWith(t, db, tc)
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		good := worker.New(tc, worker.Deps{Kinds: app.Workers(), Store: f.store, BaseURL: "http://assent.test", Logger: quiet})
		require.NoError(t, good.Start())
		r := f.do(t, "POST", "/api/v1/approvals", f.agentKey, `{"title":"Ship it"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		wfID := approvals.WorkflowID(id)
		require.Eventually(t, func() bool {
			g := f.do(t, "GET", "/api/v1/approvals/"+id, f.agentKey, "", nil)
			return g.status == 200 && g.decoded["status"] == "pending"
		}, 30*time.Second, 100*time.Millisecond)
		good.Stop()
		_, err := tc.WorkflowService().ResetStickyTaskQueue(ctx, &workflowservice.ResetStickyTaskQueueRequest{
			Namespace: ns, Execution: &commonpb.WorkflowExecution{WorkflowId: wfID}})
		require.NoError(t, err)

		// A broken deploy: every workflow task of the approval fails, each
		// failure reported (the SDK reports only a task's first and lets
		// the later attempts time out, which under load took minutes).
		broken, stop := context.WithCancel(ctx)
		defer stop()
		go failWorkflowTasks(broken, tc, ns, workflows.TaskQueue)
		require.NoError(t, tc.SignalWorkflow(ctx, wfID, "", "nudge", nil))
		require.Eventually(t, func() bool {
			d, err := tc.DescribeWorkflowExecution(ctx, wfID, "")
			require.NoError(t, err)
			// From the third attempt Temporal refuses Updates.
			return d.GetPendingWorkflowTask().GetAttempt() >= 3
		}, 3*time.Minute, 100*time.Millisecond, "the workflow task fails and is retried")

		d := f.do(t, "POST", "/api/v1/approvals/"+id+"/decision", f.memberToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 503, d.status, string(d.body))
		assert.Equal(t, "service_unavailable", errField(d, "code"))
		assert.Equal(t, "1", d.header.Get("Retry-After"))
	})
}

// failWorkflowTasks takes every workflow task of queue in namespace ns and
// reports it failed, as a worker whose code panics would, until ctx ends.
func failWorkflowTasks(ctx context.Context, c client.Client, ns, queue string) {
	svc := c.WorkflowService()
	for ctx.Err() == nil {
		task, err := svc.PollWorkflowTaskQueue(ctx, &workflowservice.PollWorkflowTaskQueueRequest{Namespace: ns,
			TaskQueue: &taskqueuepb.TaskQueue{Name: queue, Kind: enumspb.TASK_QUEUE_KIND_NORMAL}, Identity: "a bad deploy"})
		if err != nil || len(task.GetTaskToken()) == 0 {
			continue
		}
		_, _ = svc.RespondWorkflowTaskFailed(ctx, &workflowservice.RespondWorkflowTaskFailedRequest{Namespace: ns,
			TaskToken: task.GetTaskToken(), Cause: enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
			Failure: &failurepb.Failure{Message: "a bad deploy"}, Identity: "a bad deploy"})
	}
}

// refusingUpdates is a workflow client that refuses its next refusals
// Updates as Temporal refuses them while a workflow task that lost a race
// (UnhandledCommand) is retried, which no test can time.
type refusingUpdates struct {
	client.Client
	refusals atomic.Int32
}

func (c *refusingUpdates) UpdateWorkflow(ctx context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	if c.refusals.Add(-1) >= 0 {
		return nil, serviceerror.NewWorkflowNotReady("Workflow Task in failed state.")
	}
	return c.Client.UpdateWorkflow(ctx, o)
}

// A decision that arrives while the workflow's task is retried for a
// moment waits it out and is taken, rather than answering 503.
func TestAnUpdateRidesOutAMomentaryFailedTask(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		tc := &refusingUpdates{Client: temporalenv.Client(t)}
		f := newFixtureWith(t, db, tc)
		temporalenv.Run(t, tc.Client, worker.Deps{Store: f.store, BaseURL: "http://assent.test"})
		r := f.do(t, "POST", "/api/v1/approvals", f.agentKey, `{"title":"Ship it"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		require.Eventually(t, func() bool {
			g := f.do(t, "GET", "/api/v1/approvals/"+id, f.agentKey, "", nil)
			return g.status == 200 && g.decoded["status"] == "pending"
		}, 30*time.Second, 100*time.Millisecond)

		tc.refusals.Store(3)
		d := f.do(t, "POST", "/api/v1/approvals/"+id+"/decision", f.memberToken, `{"decision":"approve"}`, nil)
		assert.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, "approved", d.decoded["status"])
		assert.Less(t, tc.refusals.Load(), int32(0), "the Update was refused three times, then taken")
	})
}
