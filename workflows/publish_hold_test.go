package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// holdHarness runs the hold workflow with recording activities.
type holdHarness struct {
	Env       *testsuite.TestWorkflowEnvironment
	started   []string
	written   []workflows.HoldOutcome
	writtenAt []time.Time
	Results   map[string]error
}

func newHoldHarness() *holdHarness {
	var suite testsuite.WorkflowTestSuite
	h := &holdHarness{Env: suite.NewTestWorkflowEnvironment(), Results: map[string]error{}}
	h.Env.SetStartTime(workflowtest.Start)
	h.Env.RegisterWorkflow(workflows.PublishHold)
	h.Env.RegisterActivityWithOptions(func(_ context.Context, in workflows.PublishHoldInput) error {
		h.started = append(h.started, in.VersionID)
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityStartHold})
	h.Env.RegisterActivityWithOptions(func(_ context.Context, o workflows.HoldOutcome) error {
		h.written = append(h.written, o)
		h.writtenAt = append(h.writtenAt, h.Env.Now().UTC())
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityDecideHeld})
	return h
}

func (h *holdHarness) decide(offset time.Duration, key string, d workflows.HoldDecision) {
	h.Env.RegisterDelayedCallback(func() {
		h.Env.UpdateWorkflow(workflows.UpdateDecideHold, key, &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { h.Results[key] = err },
			OnComplete: func(_ any, err error) { h.Results[key] = err },
		}, workflowtest.Addressed("ver_1", d))
	}, offset)
}

func (h *holdHarness) run(heldAt time.Time) workflows.HoldOutcome {
	h.Env.ExecuteWorkflow(workflows.PublishHold, workflows.PublishHoldInput{OrganizationID: "org_1", VersionID: "ver_1", HeldAt: heldAt})
	var out workflows.HoldOutcome
	if h.Env.IsWorkflowCompleted() && h.Env.GetWorkflowError() == nil {
		_ = h.Env.GetWorkflowResult(&out)
	}
	return out
}

func refusal(t *testing.T, err error) string {
	t.Helper()
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	return app.Type()
}

// TestHeldVersionReleased: an administrator's release is written once and
// answered; a second decision is refused, as is a decision that is
// neither. (Once the workflow completes, the client maps a decision to
// invalid_state from the record.)
func TestHeldVersionReleased(t *testing.T) {
	h := newHoldHarness()
	h.decide(time.Hour, "bad", workflows.HoldDecision{Decision: "publish", ActorID: "mem_a", ActorName: "Ada"})
	h.decide(2*time.Hour, "release", workflows.HoldDecision{Decision: workflows.HoldRelease, ActorID: "mem_a", ActorName: "Ada"})
	h.decide(2*time.Hour, "again", workflows.HoldDecision{Decision: workflows.HoldDecline, ActorID: "mem_b", ActorName: "Bo"})
	out := h.run(workflowtest.Start)
	require.True(t, h.Env.IsWorkflowCompleted())
	require.NoError(t, h.Env.GetWorkflowError())

	assert.Equal(t, []string{"ver_1"}, h.started)
	require.Len(t, h.written, 1)
	assert.Equal(t, workflows.HoldRelease, h.written[0].Decision)
	assert.Equal(t, "mem_a", h.written[0].ActorID)
	assert.False(t, h.written[0].Timeout)
	assert.Equal(t, workflowtest.Start.Add(2*time.Hour), h.writtenAt[0])
	assert.Equal(t, h.written[0], out)
	assert.NoError(t, h.Results["release"])
	assert.Equal(t, apperr.InvalidRequest, refusal(t, h.Results["bad"]))
	assert.Equal(t, apperr.InvalidState, refusal(t, h.Results["again"]), "a second decision while the first is written")
}

// TestHeldVersionDeclinedAfterSevenDays: undecided, a held version is
// declined by Assent at exactly seven days after it was held, counted
// from when the scan held it, not from the workflow's start.
func TestHeldVersionDeclinedAfterSevenDays(t *testing.T) {
	h := newHoldHarness()
	heldAt := workflowtest.Start.Add(-time.Hour) // the reconciler started it an hour late
	out := h.run(heldAt)
	require.True(t, h.Env.IsWorkflowCompleted())
	require.NoError(t, h.Env.GetWorkflowError())
	require.Len(t, h.written, 1)
	assert.Equal(t, workflows.HoldDecline, out.Decision)
	assert.True(t, out.Timeout)
	assert.Equal(t, heldAt.Add(workflows.HoldTimeout), h.writtenAt[0])
}

// TestHeldVersionDeclineJustBeforeTimeout: a decision a second before the
// timeout is the one written; the timeout writes nothing more.
func TestHeldVersionDeclineJustBeforeTimeout(t *testing.T) {
	h := newHoldHarness()
	h.decide(workflows.HoldTimeout-time.Second, "decline", workflows.HoldDecision{Decision: workflows.HoldDecline, ActorID: "mem_a", ActorName: "Ada"})
	out := h.run(workflowtest.Start)
	require.NoError(t, h.Env.GetWorkflowError())
	require.Len(t, h.written, 1)
	assert.False(t, out.Timeout)
	assert.Equal(t, "mem_a", out.ActorID)
	assert.NoError(t, h.Results["decline"])
}

// TestScheduleDueWritesItsMoment: a schedule's run writes schedule.due for
// the moment it started, which a retry carries alike.
func TestScheduleDueWritesItsMoment(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetStartTime(workflowtest.Start)
	var got []workflows.ScheduleDueEvent
	attempts := 0
	env.RegisterActivityWithOptions(func(_ context.Context, e workflows.ScheduleDueEvent) error {
		attempts++
		got = append(got, e)
		if attempts == 1 {
			return assert.AnError // the database was away: retried
		}
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityScheduleDue})
	env.ExecuteWorkflow(workflows.ScheduleDue, workflows.ScheduleDueInput{OrganizationID: "org_1", ScheduleID: "sch_1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, got, 2)
	assert.Equal(t, got[0], got[1], "the retry carries the same moment")
	assert.Equal(t, "sch_1", got[0].ScheduleID)
	assert.True(t, got[0].DueAt.Equal(workflowtest.Start), "%v", got[0].DueAt)
}
