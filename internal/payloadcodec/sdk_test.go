package payloadcodec

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"

	"github.com/assent-hq/assent/internal/secretkey"
)

// bound is an Update's argument, bound as workflows.Target is.
type bound struct {
	Note string
	use  string
}

func (b *bound) SetPayloadUse(use string) { b.use = use }
func (b bound) PayloadUse() string        { return b.use }

// echoWorkflow runs an activity and a local activity on its input, then
// waits for one "decide" Update.
func echoWorkflow(ctx workflow.Context, in string) (string, error) {
	var note string
	if err := workflow.SetUpdateHandler(ctx, "decide", func(ctx workflow.Context, b bound) (string, error) {
		note = b.Note
		return "took " + b.Note, nil
	}); err != nil {
		return "", err
	}
	var a, l string
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteActivity(ctx, "echo", in).Get(ctx, &a); err != nil {
		return "", err
	}
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	if err := workflow.ExecuteLocalActivity(ctx, "echo", a).Get(ctx, &l); err != nil {
		return "", err
	}
	if in == "scheduled" {
		return l, nil
	}
	if err := workflow.Await(ctx, func() bool { return note != "" }); err != nil {
		return "", err
	}
	return l + " " + note, nil
}

// Every path the SDK takes a payload along (workflow input and result, an
// activity's and a local activity's input and result, an Update's argument
// and result, failures, a Temporal Schedule's runs) gives the converter the
// same workflow and activity on both sides, so bound payloads round-trip;
// an Update from a client that does not bind its message is refused.
func TestBoundPayloadsRoundTripThroughTheSDK(t *testing.T) {
	t.Parallel()
	codec := New(ring(t, secretkey.Generate()))
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(ClientOptions(client.Options{}, codec)))
	c := ts.GetDefaultClient()
	ts.NewWorker("q", func(r worker.Registry) {
		r.RegisterWorkflow(echoWorkflow)
		r.RegisterActivityWithOptions(func(_ context.Context, s string) (string, error) { return s + "!", nil },
			activity.RegisterOptions{Name: "echo"})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "wf-1", TaskQueue: "q"}, echoWorkflow, "hi")
	require.NoError(t, err)
	update := func(c client.Client) (string, error) {
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "wf-1", UpdateName: "decide",
			Args: []any{bound{Note: "yes"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return "", err
		}
		var out string
		return out, h.Get(ctx, &out)
	}

	// A client with the key but without the interceptor binds no message.
	unbound, err := client.NewClientFromExisting(c, client.Options{Namespace: ts.GetDefaultNamespace(), DataConverter: DataConverter(codec), FailureConverter: FailureConverter(codec)})
	require.NoError(t, err)
	_, err = update(unbound)
	assert.ErrorContains(t, err, `the argument of Update "decide" was sent for no message`)

	took, err := update(c)
	require.NoError(t, err)
	assert.Equal(t, "took yes", took)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	assert.Equal(t, "hi!! yes", out)

	// A schedule's runs are started under its action's id and the time.
	h, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{ID: "sched-1", Spec: client.ScheduleSpec{},
		Action: &client.ScheduleWorkflowAction{ID: "wf-scheduled", Workflow: echoWorkflow, Args: []any{"scheduled"}, TaskQueue: "q"}})
	require.NoError(t, err)
	require.NoError(t, h.Trigger(ctx, client.ScheduleTriggerOptions{}))
	var runID string
	require.Eventually(t, func() bool {
		d, err := h.Describe(ctx)
		if err != nil || len(d.Info.RecentActions) == 0 {
			return false
		}
		runID = d.Info.RecentActions[0].StartWorkflowResult.WorkflowID
		return true
	}, 30*time.Second, 100*time.Millisecond)
	assert.NotEqual(t, "wf-scheduled", runID)
	require.NoError(t, c.GetWorkflow(ctx, runID, "").Get(ctx, &out))
	assert.Equal(t, "scheduled!!", out)
}

// waitWorkflow waits for one "decide" Update and returns its input and
// the Update's note.
func waitWorkflow(ctx workflow.Context, in string) (string, error) {
	var note string
	if err := workflow.SetUpdateHandler(ctx, "decide", func(ctx workflow.Context, b bound) (string, error) {
		note = b.Note
		return "took " + b.Note, nil
	}); err != nil {
		return "", err
	}
	if err := workflow.Await(ctx, func() bool { return note != "" }); err != nil {
		return "", err
	}
	return in + " " + note, nil
}

// A worker that meets a payload sealed under a key it does not hold (an
// instance with another ASSENT_SECRET_KEY on the same namespace and task
// queue) fails the workflow task, which Temporal retries, and never the
// workflow: once a worker with the key runs, the workflow goes on.
func TestAWorkerWithoutTheKeyFailsTheTaskNotTheWorkflow(t *testing.T) {
	t.Parallel()
	keyA, keyB := New(ring(t, secretkey.Generate())), New(ring(t, secretkey.Generate()))
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(ClientOptions(client.Options{}, keyA)))
	a := ts.GetDefaultClient()
	b, err := client.Dial(ClientOptions(client.Options{HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace()}, keyB))
	require.NoError(t, err)
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := func(c client.Client) worker.Worker {
		w := worker.New(c, "q", worker.Options{})
		w.RegisterWorkflow(waitWorkflow)
		require.NoError(t, w.Start())
		return w
	}
	// failing waits until the workflow's task has failed at least twice and
	// checks the workflow is still running.
	failing := func(id string) {
		t.Helper()
		require.Eventually(t, func() bool {
			d, err := a.DescribeWorkflowExecution(ctx, id, "")
			require.NoError(t, err)
			require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.GetWorkflowExecutionInfo().GetStatus())
			return d.GetPendingWorkflowTask().GetAttempt() >= 2
		}, time.Minute, 100*time.Millisecond, "the workflow task fails and is retried")
		iter := a.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			if f := e.GetWorkflowTaskFailedEventAttributes(); f != nil {
				assert.Equal(t, enumspb.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE, f.GetCause())
			}
			assert.Nil(t, e.GetWorkflowExecutionFailedEventAttributes(), "the workflow never fails")
		}
	}

	// The workflow's input is sealed under A; B's worker cannot open it.
	wb := start(b)
	run, err := a.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "wf-input", TaskQueue: "q"}, waitWorkflow, "hi")
	require.NoError(t, err)
	failing("wf-input")
	wb.Stop()

	wa := start(a)
	defer wa.Stop()
	h, err := a.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "wf-input", UpdateName: "decide",
		Args: []any{bound{Note: "yes"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	require.NoError(t, err)
	require.NoError(t, h.Get(ctx, nil))
	var out string
	require.NoError(t, run.Get(ctx, &out))
	assert.Equal(t, "hi yes", out)
}
