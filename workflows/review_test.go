package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// reviewHarness runs the review workflow in the test environment with
// recording persistence and email activities.
type reviewHarness struct {
	t           *testing.T
	env         *testsuite.TestWorkflowEnvironment
	mu          sync.Mutex
	transitions []workflows.ReviewTransition
	emails      int
	results     map[string]error
	states      map[string]workflows.ReviewState
	id          string
}

func newReviewHarness(t *testing.T) *reviewHarness {
	var suite testsuite.WorkflowTestSuite
	h := &reviewHarness{t: t, env: suite.NewTestWorkflowEnvironment(), results: map[string]error{}, states: map[string]workflows.ReviewState{}}
	h.env.SetStartTime(start)
	h.env.RegisterWorkflow(workflows.Review)
	h.env.RegisterActivityWithOptions(func(_ context.Context, tr workflows.ReviewTransition) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.transitions = append(h.transitions, tr)
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityPersistReview})
	h.env.RegisterActivityWithOptions(func(context.Context, workflows.EmailReviewersInput) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.emails++
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityEmailReviewers})
	return h
}

func reviewInput(required int) workflows.ReviewInput {
	return workflows.ReviewInput{ReviewID: "rev_1", OrganizationID: "org_1", ReviewerIDs: []string{"mem_a", "mem_b", "mem_c"},
		RequiredApprovals: required, Requester: "key_1", ExpiresAt: start.Add(48 * time.Hour)}
}

func verdict(reviewer, v, note string) workflows.VerdictRequest {
	return workflows.VerdictRequest{ReviewerID: reviewer, ReviewerName: "Person " + reviewer, Verdict: v, Note: note}
}

func (h *reviewHarness) update(offset time.Duration, key, name string, arg any) {
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(name, key, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { h.results[key] = err },
			OnComplete: func(v any, err error) {
				h.results[key] = err
				if s, ok := v.(workflows.ReviewState); ok {
					h.states[key] = s
				}
			},
		}, addressed(h.id, arg))
	}, offset)
}

func (h *reviewHarness) run(in workflows.ReviewInput) workflows.ReviewState {
	h.id = in.ReviewID
	h.env.ExecuteWorkflow(workflows.Review, in)
	require.True(h.t, h.env.IsWorkflowCompleted())
	require.NoError(h.t, h.env.GetWorkflowError())
	var s workflows.ReviewState
	require.NoError(h.t, h.env.GetWorkflowResult(&s))
	return s
}

func (h *reviewHarness) refusedWith(key, code string) {
	h.t.Helper()
	err, ran := h.results[key]
	require.True(h.t, ran, "update %s never ran", key)
	require.Error(h.t, err, "update %s should be refused", key)
	assert.Equal(h.t, code, errType(err), "update %s: %v", key, err)
}

func (h *reviewHarness) actions() (out []string) {
	for _, t := range h.transitions {
		out = append(out, t.Action)
	}
	return out
}

func TestReviewApprovedWhenDistinctApprovalsReachRequired(t *testing.T) {
	h := newReviewHarness(t)
	h.update(time.Minute, "stranger", workflows.UpdateVerdict, verdict("mem_x", workflows.VerdictApproved, ""))
	h.update(2*time.Minute, "a", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, "reads well"))
	h.update(3*time.Minute, "a-again", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, ""))
	h.update(4*time.Minute, "bogus", workflows.UpdateVerdict, verdict("mem_b", "maybe", ""))
	h.update(5*time.Minute, "b", workflows.UpdateVerdict, verdict("mem_b", workflows.VerdictApproved, ""))
	s := h.run(reviewInput(2))

	h.refusedWith("stranger", apperr.NotAReviewer)
	h.refusedWith("a-again", apperr.AlreadyDecided)
	h.refusedWith("bogus", apperr.InvalidRequest)
	assert.Equal(t, states.Open, h.states["a"].Status, "one approval of two leaves it open")
	assert.Equal(t, 1, h.states["a"].ApprovalsSoFar)

	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, 2, s.ApprovalsSoFar)
	require.NotNil(t, s.SettledAt)
	assert.Equal(t, start.Add(5*time.Minute), *s.SettledAt)
	require.Len(t, s.Verdicts, 2)
	assert.Equal(t, "reads well", s.Verdicts[0].Note)
	assert.Equal(t, []string{"created", "approved", "approved"}, h.actions())
	assert.Equal(t, "review.requested", h.transitions[0].Event)
	assert.Empty(t, h.transitions[1].Event, "a verdict that does not settle is audited, not sent")
	assert.Equal(t, "1 of 2 approvals; reads well", h.transitions[1].Detail)
	assert.Equal(t, "review.approved", h.transitions[2].Event)
	for i, tr := range h.transitions {
		assert.Equal(t, i+1, tr.Seq)
	}
	assert.Equal(t, 1, h.emails, "reviewers are emailed once, at creation")
}

func TestReviewOneChangesRequestedSettlesIt(t *testing.T) {
	h := newReviewHarness(t)
	h.update(time.Minute, "a", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, ""))
	h.update(2*time.Minute, "b", workflows.UpdateVerdict, verdict("mem_b", workflows.VerdictChangesRequested, "the totals are wrong"))
	s := h.run(reviewInput(3))
	assert.Equal(t, states.ChangesRequested, s.Status)
	assert.Equal(t, 1, s.ApprovalsSoFar)
	assert.Equal(t, []string{"created", "approved", "changes_requested"}, h.actions())
	last := h.transitions[2]
	assert.Equal(t, "review.changes_requested", last.Event)
	assert.Equal(t, "mem_b", last.ActorID)
	assert.Equal(t, "the totals are wrong", last.Detail)
}

func TestReviewExpiresAtTheExactInstant(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(2)
	h.update(time.Minute, "a", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, ""))
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"created", "approved", "expired"}, h.actions())
	last := h.transitions[2]
	assert.Equal(t, "review.expired", last.Event)
	assert.Equal(t, in.ExpiresAt, last.At)
	assert.Len(t, s.Verdicts, 1, "verdicts returned before expiry are kept")
}

func TestReviewCancelledByRequesterOrAdministrator(t *testing.T) {
	h := newReviewHarness(t)
	h.update(time.Minute, "by-reviewer", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_a"})
	h.update(2*time.Minute, "by-requester", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "key_1", ActorName: "agent"})
	s := h.run(reviewInput(1))
	h.refusedWith("by-reviewer", apperr.Forbidden)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "cancelled"}, h.actions())
	assert.Empty(t, h.transitions[1].Detail, "the requester cancels for themselves")
	assert.Empty(t, h.transitions[1].Event, "cancelling sends no event")
}
