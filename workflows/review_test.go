package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// reviewHarness runs the review workflow in the test environment with
// recording persistence and email activities.
type reviewHarness struct {
	*kindHarness[workflows.ReviewState]
	emails int
}

func newReviewHarness(t *testing.T) *reviewHarness {
	h := &reviewHarness{kindHarness: newKindHarness[workflows.ReviewState](t, workflows.Review, workflows.ActivityPersistReview)}
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

func (h *reviewHarness) run(in workflows.ReviewInput) workflows.ReviewState {
	return h.runAs(in.ReviewID, in)
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

	require.NoError(t, h.results["remove"].err)
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
	require.NoError(t, h.results["remove"].err)
	assert.Equal(t, []string{"mem_a", "mem_owner"}, h.results["remove"].state.ReviewerIDs)
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
	require.NoError(t, h.results["remove"].err)
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.ReviewerIDs)
	assert.Equal(t, 1, s.RequiredApprovals)
	assert.Equal(t, "removed Gus from the reviewers", h.transitions[1].Detail)
	assert.Equal(t, []string{"created", workflows.ActionReviewerRemoved, "expired"}, h.actions())
	assert.Equal(t, 1, h.emails)
}
