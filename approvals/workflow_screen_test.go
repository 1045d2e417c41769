package approvals_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// screened registers the model screen's activity: answer is called for
// each attempt, whose number and moment are kept.
func (h *harness) screened(answer func(ctx context.Context, attempt int32) (approvals.ScreenResult, error)) *[]time.Duration {
	var attempts []time.Duration
	h.Env.RegisterActivityWithOptions(func(ctx context.Context, in approvals.ScreenInput) (approvals.ScreenResult, error) {
		assert.Equal(h.T, approvals.ScreenInput{OrganizationID: "org_1", ApprovalID: "apr_1"}, in)
		h.Mu.Lock()
		attempts = append(attempts, h.Env.Now().Sub(workflowtest.Start))
		h.Mu.Unlock()
		return answer(ctx, activity.GetInfo(ctx).Attempt)
	}, activity.RegisterOptions{Name: approvals.ActivityScreen})
	return &attempts
}

// TestScreenIsRetriedAndItsConcernsAskForAReason: a screen that fails
// twice is asked again, 2 and 4 seconds later; its concerns are in the
// "created" transition, written only after it answered, and approvers
// are emailed after that. A decision sent while it screened waits, and
// is held to its concerns: approving then needs a reason.
func TestScreenIsRetriedAndItsConcernsAskForAReason(t *testing.T) {
	h := newHarness(t)
	attempts := h.screened(func(_ context.Context, attempt int32) (approvals.ScreenResult, error) {
		if attempt < 3 {
			return approvals.ScreenResult{}, errors.New("the endpoint answered 503")
		}
		return approvals.ScreenResult{Concerns: []approvals.ScreenConcern{{Principle: "privacy", Concern: "Personal data leaves the company."}}}, nil
	})
	in := baseInput()
	in.Screen = true
	h.Update(time.Second, "early", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(time.Minute, "no-reason", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(2*time.Minute, "reason", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve", Reason: "Needed for the refund."})
	s := h.run(in)

	require.Len(t, *attempts, 3)
	last := (*attempts)[2]
	assert.Equal(t, 2*time.Second, (*attempts)[1], "retried after the initial interval")
	assert.GreaterOrEqual(t, last-(*attempts)[1], 2*time.Second)
	require.NotEmpty(t, h.Transitions)
	created := h.Transitions[0]
	assert.Equal(t, workflows.ActionCreated, created.Action)
	assert.Equal(t, workflowtest.Start.Add(last), created.At, "written once the screen answered")
	assert.Equal(t, "the model screen raised 1 concern (privacy), so approving needs a written reason", created.Detail)
	assert.Equal(t, []approvals.ScreenConcern{{Principle: "privacy", Concern: "Personal data leaves the company."}}, created.State.ScreenConcerns)
	require.NotEmpty(t, h.emails)
	assert.False(t, h.emails[0].at.Before(workflowtest.Start.Add(last)), "approvers are asked after the screen")

	h.RefusedWith("early", apperr.InvalidRequest)
	h.RefusedWith("no-reason", apperr.InvalidRequest)
	assert.Contains(t, h.Results["no-reason"].Err.Error(), "the model screen raised a concern")
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, "Needed for the refund.", s.Reason)
}

// TestScreenThatNeverAnswersIsLeftOut: a model that never answers has
// each attempt cut off by its timeout (the test environment runs
// activities in real time, so each attempt reports the timeout Temporal
// would record) and is retried, with time skipped, until the screen gives
// up; the request is created without concerns, its timeline says so, and
// it is approved without a reason.
func TestScreenThatNeverAnswersIsLeftOut(t *testing.T) {
	h := newHarness(t)
	attempts := h.screened(func(context.Context, int32) (approvals.ScreenResult, error) {
		return approvals.ScreenResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
	})
	in := baseInput()
	in.Screen = true
	h.Update(10*time.Minute, "decide", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	s := h.run(in)

	assert.Len(t, *attempts, 3, "retried, three attempts at most")
	created := h.Transitions[0]
	assert.Equal(t, "the model screen failed (the model did not answer in time), so the request proceeds without it", created.Detail)
	assert.Empty(t, created.State.ScreenConcerns)
	assert.False(t, created.At.After(workflowtest.Start.Add(approvals.ScreenTimeout)), "within the screen's bound")
	assert.Equal(t, states.Approved, s.Status)
}

// TestScreenRefusedIsNotRetried: an endpoint that refuses the request
// (non-retryable) is asked once; a screen that skipped says why.
func TestScreenRefusedIsNotRetried(t *testing.T) {
	h := newHarness(t)
	attempts := h.screened(func(context.Context, int32) (approvals.ScreenResult, error) {
		return approvals.ScreenResult{}, temporal.NewNonRetryableApplicationError("the endpoint answered 401", "ModelScreenRefused", nil)
	})
	in := baseInput()
	in.Screen = true
	in.ExpiresAt = workflowtest.Start.Add(time.Hour)
	h.run(in)
	assert.Len(t, *attempts, 1)
	assert.Equal(t, "the model screen failed (the endpoint answered 401), so the request proceeds without it", h.Transitions[0].Detail)

	h = newHarness(t)
	h.screened(func(context.Context, int32) (approvals.ScreenResult, error) {
		return approvals.ScreenResult{Skipped: "it was switched off before it ran"}, nil
	})
	h.run(in)
	assert.Equal(t, "the model screen did not run: it was switched off before it ran", h.Transitions[0].Detail)

	// Off, the workflow never asks.
	h = newHarness(t)
	asked := h.screened(func(context.Context, int32) (approvals.ScreenResult, error) { return approvals.ScreenResult{}, nil })
	in.Screen = false
	h.run(in)
	assert.Empty(t, *asked)
	assert.Empty(t, h.Transitions[0].Detail)
}
