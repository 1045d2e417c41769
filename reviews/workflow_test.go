package reviews_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// reviewHarness runs the review workflow in the test environment with
// recording persistence and email activities.
type reviewHarness struct {
	*workflowtest.Harness[reviews.State]
	emails int
}

func newReviewHarness(t *testing.T) *reviewHarness {
	h := &reviewHarness{Harness: workflowtest.New[reviews.State](t, reviews.Workflow, reviews.ActivityPersist)}
	h.Env.RegisterActivityWithOptions(func(context.Context, reviews.EmailReviewersInput) error {
		h.Mu.Lock()
		defer h.Mu.Unlock()
		h.emails++
		return nil
	}, activity.RegisterOptions{Name: reviews.ActivityEmailReviewers})
	return h
}

func reviewInput(required int) reviews.WorkflowInput {
	return reviews.WorkflowInput{
		RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: workflowtest.Start.Add(48 * time.Hour)},
		ReviewID:          "rev_1",
		ReviewerIDs:       []string{"mem_a", "mem_b", "mem_c"},
		RequiredApprovals: required,
	}
}

func verdict(reviewer, v, note string) reviews.VerdictRequest {
	return reviews.VerdictRequest{ReviewerID: reviewer, ReviewerName: "Person " + reviewer, Verdict: v, Note: note}
}

func (h *reviewHarness) run(in reviews.WorkflowInput) reviews.State {
	return h.RunAs(in.ReviewID, in)
}

// TestRemovedReviewerCannotReturnAVerdict: a removed guest is off the
// reviewers at once, by the validator and the handler alike; the others
// can still give the approvals needed, so nobody joins and nobody is
// emailed again.
func TestRemovedReviewerCannotReturnAVerdict(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(1)
	in.ReviewerIDs = []string{"gst_g", "mem_a"}
	remove := workflows.RemoveAskedRequest{PersonID: "gst_g", PersonName: "gus@partner.example",
		Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"}
	h.Update(time.Minute, "remove", reviews.UpdateRemoveReviewer, remove)
	h.Update(2*time.Minute, "remove-again", reviews.UpdateRemoveReviewer, remove)
	h.Update(3*time.Minute, "guest", reviews.UpdateVerdict, verdict("gst_g", reviews.VerdictApproved, ""))
	h.Update(4*time.Minute, "ann", reviews.UpdateVerdict, verdict("mem_a", reviews.VerdictApproved, ""))
	s := h.run(in)

	require.NoError(t, h.Results["remove"].Err)
	h.RefusedWith("remove-again", apperr.NotAReviewer)
	h.RefusedWith("guest", apperr.NotAReviewer)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a"}, s.ReviewerIDs)
	assert.Equal(t, []string{"created", reviews.ActionReviewerRemoved, "approved"}, h.Actions())
	removed := h.Transitions[1]
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
	h.Update(time.Minute, "a", reviews.UpdateVerdict, verdict("mem_a", reviews.VerdictApproved, ""))
	h.Update(2*time.Minute, "remove-a", reviews.UpdateRemoveReviewer, workflows.RemoveAskedRequest{PersonID: "mem_a"})
	h.Update(3*time.Minute, "remove", reviews.UpdateRemoveReviewer, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "gus@partner.example", Defaults: []string{"mem_owner", "gst_g", "mem_a"}, ActorID: "mem_owner", ActorName: "Olivia"})
	h.Update(4*time.Minute, "owner", reviews.UpdateVerdict, verdict("mem_owner", reviews.VerdictApproved, "fine"))
	s := h.run(in)

	h.RefusedWith("remove-a", apperr.AlreadyDecided)
	require.NoError(t, h.Results["remove"].Err)
	assert.Equal(t, []string{"mem_a", "mem_owner"}, h.Results["remove"].State.ReviewerIDs)
	assert.Equal(t, "removed gus@partner.example from the reviewers; "+reviews.DefaultReviewersAdded, h.Transitions[2].Detail)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, 2, s.ApprovalsSoFar)
	assert.Equal(t, []string{"created", "approved", reviews.ActionReviewerRemoved, "approved"}, h.Actions())
	assert.Equal(t, 2, h.emails, "the new reviewers are emailed through the same activity as at creation")
}

// TestRemovingTheLastReviewerWithNoDefaults: nobody can join (no owner or
// administrator reads the report), so the timeline says only the removal
// and the review waits for its expiry, its bar unchanged.
func TestRemovingTheLastReviewerWithNoDefaults(t *testing.T) {
	h := newReviewHarness(t)
	in := reviewInput(1)
	in.ReviewerIDs = []string{"gst_g"}
	h.Update(time.Minute, "remove", reviews.UpdateRemoveReviewer, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "Gus", ActorID: "operator", ActorName: "the operator"})
	s := h.run(in)
	require.NoError(t, h.Results["remove"].Err)
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.ReviewerIDs)
	assert.Equal(t, 1, s.RequiredApprovals)
	assert.Equal(t, "removed Gus from the reviewers", h.Transitions[1].Detail)
	assert.Equal(t, []string{"created", reviews.ActionReviewerRemoved, "expired"}, h.Actions())
	assert.Equal(t, 1, h.emails)
}

// TestDelegateJoinsAWaitingReview: the delegate's verdict is on Ann's
// behalf; a delegate for a reviewer who already returned hers is refused.
func TestDelegateJoinsAWaitingReview(t *testing.T) {
	h := newReviewHarness(t)
	h.Update(time.Minute, "b-verdict", reviews.UpdateVerdict, verdict("mem_b", reviews.VerdictApproved, ""))
	h.Update(2*time.Minute, "b-delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_b", DelegateID: "mem_e"})
	h.Update(3*time.Minute, "delegate", workflows.UpdateAddDelegate, workflowtest.AnnAway)
	h.Update(4*time.Minute, "dee", reviews.UpdateVerdict, verdict("mem_d", reviews.VerdictApproved, "good"))
	s := h.run(reviewInput(2))

	h.RefusedWith("b-delegate", apperr.AlreadyDecided)
	require.NoError(t, h.Results["dee"].Err)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.Verdicts[1].OnBehalfOf)
	assert.Equal(t, "2 of 2 approvals; on behalf of Ann; good", h.Transitions[3].Detail)
	assert.Equal(t, 2, h.emails)
}

func TestReviewUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newReviewHarness(t)
	h.RefusesOtherRequests(reviews.UpdateRemoveReviewer, func(target workflows.Target) map[string]workflowtest.Sent {
		v := verdict("mem_a", reviews.VerdictApproved, "")
		v.Target = target
		return map[string]workflowtest.Sent{"verdict": {Name: reviews.UpdateVerdict, Arg: v}}
	})
	s := h.run(reviewInput(1))
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.Verdicts)
	assert.Len(t, s.ReviewerIDs, 3)
}

// TestDefaultReviewersStandInForThoseAway: a default reviewer the caller
// replaced by who stands in for an owner away joins standing in for them,
// and returns a verdict on their behalf.
func TestDefaultReviewersStandInForThoseAway(t *testing.T) {
	r := newReviewHarness(t)
	rin := reviewInput(1)
	rin.ReviewerIDs = []string{"gst_g"}
	r.Update(time.Minute, "remove", reviews.UpdateRemoveReviewer, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "Gus", Defaults: []string{"mem_d"}, OnBehalfOf: map[string]workflows.Delegator{"mem_d": {ID: "mem_owner", Name: "Olivia"}}})
	r.Update(2*time.Minute, "dee", reviews.UpdateVerdict, verdict("mem_d", reviews.VerdictApproved, ""))
	rs := r.run(rin)
	assert.Equal(t, states.Approved, rs.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_owner", Name: "Olivia"}, rs.Verdicts[0].OnBehalfOf)
}
