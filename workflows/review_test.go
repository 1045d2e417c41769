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

// TestRemovedReviewerCannotReturnAVerdict: a removed guest is off the
// reviewers at once, by the validator and the handler alike; the others
// can still give the approvals needed, so nobody joins and nobody is
// emailed again.
func TestRemovedReviewerCannotReturnAVerdict(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(1)
	in.ReviewerIDs = []string{"gst_g", "mem_a"}
	remove := workflows.RemoveReviewerRequest{PersonID: "gst_g", PersonName: "gus@partner.example",
		Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"}
	h.update(time.Minute, "remove", workflows.UpdateRemoveReviewer, remove)
	h.update(2*time.Minute, "remove-again", workflows.UpdateRemoveReviewer, remove)
	h.update(3*time.Minute, "guest", workflows.UpdateVerdict, verdict("gst_g", workflows.VerdictApproved, ""))
	h.update(4*time.Minute, "ann", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, ""))
	s := h.run(in)

	require.NoError(t, h.results["remove"])
	h.refusedWith("remove-again", apperr.NotAReviewer)
	h.refusedWith("guest", apperr.NotAReviewer)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a"}, s.ReviewerIDs)
	assert.Equal(t, []string{"created", workflows.ActionReviewerRemoved, "approved"}, h.actions())
	removed := h.transitions[1]
	assert.Equal(t, "removed gus@partner.example from the reviewers", removed.Detail)
	assert.Equal(t, "key_admin", removed.ActorID)
	assert.Empty(t, removed.Event, "no event kind for it: the timeline only")
	assert.Equal(t, []string{"mem_a"}, removed.State.ReviewerIDs, "the read model learns it through the persist path")
	assert.Equal(t, 1, removed.State.RequiredApprovals, "the bar is not lowered")
	assert.Equal(t, 1, h.emails, "only the email at creation")
}

// TestRemovingANeededReviewerBringsInTheDefaults: two approvals needed,
// one given; removing the one reviewer left who could give the other
// makes the defaults reviewers (not the person removed twice, nor one
// already asked), emailed as at creation. A reviewer who already returned
// a verdict is not taken off: their verdict stands.
func TestRemovingANeededReviewerBringsInTheDefaults(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(2)
	in.ReviewerIDs = []string{"mem_a", "gst_g"}
	h.update(time.Minute, "a", workflows.UpdateVerdict, verdict("mem_a", workflows.VerdictApproved, ""))
	h.update(2*time.Minute, "remove-a", workflows.UpdateRemoveReviewer, workflows.RemoveReviewerRequest{PersonID: "mem_a"})
	h.update(3*time.Minute, "remove", workflows.UpdateRemoveReviewer, workflows.RemoveReviewerRequest{PersonID: "gst_g",
		PersonName: "gus@partner.example", Defaults: []string{"mem_owner", "gst_g", "mem_a"}, ActorID: "mem_owner", ActorName: "Olivia"})
	h.update(4*time.Minute, "owner", workflows.UpdateVerdict, verdict("mem_owner", workflows.VerdictApproved, "fine"))
	s := h.run(in)

	h.refusedWith("remove-a", apperr.AlreadyDecided)
	require.NoError(t, h.results["remove"])
	assert.Equal(t, []string{"mem_a", "mem_owner"}, h.states["remove"].ReviewerIDs)
	assert.Equal(t, "removed gus@partner.example from the reviewers; "+workflows.DefaultReviewersAdded, h.transitions[2].Detail)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, 2, s.ApprovalsSoFar)
	assert.Equal(t, []string{"created", "approved", workflows.ActionReviewerRemoved, "approved"}, h.actions())
	assert.Equal(t, 2, h.emails, "the new reviewers are emailed through the same activity as at creation")
}

// TestRemovingTheLastReviewerWithNoDefaults: nobody can join (no owner or
// administrator reads the report), so the timeline says only the removal
// and the review waits for its expiry, its bar unchanged.
func TestRemovingTheLastReviewerWithNoDefaults(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(1)
	in.ReviewerIDs = []string{"gst_g"}
	h.update(time.Minute, "remove", workflows.UpdateRemoveReviewer, workflows.RemoveReviewerRequest{PersonID: "gst_g",
		PersonName: "Gus", ActorID: "operator", ActorName: "the operator"})
	s := h.run(in)
	require.NoError(t, h.results["remove"])
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.ReviewerIDs)
	assert.Equal(t, 1, s.RequiredApprovals)
	assert.Equal(t, "removed Gus from the reviewers", h.transitions[1].Detail)
	assert.Equal(t, []string{"created", workflows.ActionReviewerRemoved, "expired"}, h.actions())
	assert.Equal(t, 1, h.emails)
}
