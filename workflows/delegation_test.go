package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// annAway is Ann's delegation to Dee starting while a request waits on
// her.
var annAway = workflows.AddDelegateRequest{DelegatorID: "mem_a", DelegatorName: "Ann", DelegateID: "mem_d", DelegateName: "Dee"}

// TestDelegateJoinsAWaitingApproval: a delegation that starts while the
// approval waits on Ann asks Dee too, who is emailed as escalated people
// are, and whose approval is in her own name on Ann's behalf. Ann's
// repeat, a stranger's and one once Dee is asked change nothing.
func TestDelegateJoinsAWaitingApproval(t *testing.T) {
	h := newHarness(t)
	h.update(time.Minute, "delegate", workflows.UpdateAddDelegate, annAway)
	h.update(2*time.Minute, "again", workflows.UpdateAddDelegate, annAway)
	h.update(3*time.Minute, "stranger", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_x", DelegateID: "mem_y"})
	h.update(4*time.Minute, "dee", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_d", ActorName: "Dee",
		Decision: workflows.DecisionApprove, Note: "fine"})
	s := h.run(baseInput())

	require.NoError(t, h.results["delegate"].err)
	h.refusedWith("again", apperr.Conflict)
	h.refusedWith("stranger", apperr.NotAnApprover)
	assert.True(t, h.results["again"].refused && h.results["stranger"].refused, "refused by the validator: no trace in the history")
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_d"}, s.ApproverIDs, "Ann stays asked beside Dee")
	assert.Equal(t, map[string]workflows.Delegator{"mem_d": {ID: "mem_a", Name: "Ann"}}, s.OnBehalfOf)
	assert.Equal(t, "mem_d", s.DecidedByID)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.DecidedOnBehalfOf)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionDelegated, workflows.ActionApproved}, h.actions())
	delegated := h.transitions[1]
	assert.Equal(t, "mem_a", delegated.ActorID, "who set the delegation")
	assert.Equal(t, "Ann is away, so Dee was asked on behalf of Ann", delegated.Detail)
	assert.Empty(t, delegated.Event, "the timeline only")
	assert.Equal(t, "on behalf of Ann; fine", h.transitions[2].Detail)
	require.Len(t, h.emails, 2, "Dee is emailed through the approvers' email, as after an escalation")
	assert.Equal(t, h.emails[0].input, h.emails[1].input)
}

// TestDelegationKeepsTheRequesterFromDeciding: standing in for the
// requester is deciding as them, whether the delegate was asked at
// creation or since; and a person and who stands in for them approve
// once between them.
func TestDelegationKeepsTheRequesterFromDeciding(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.RequiredApprovals = 2
	in.ApproverIDs = []string{"mem_req", "mem_a", "mem_b", "mem_c", "mem_e"}
	in.OnBehalfOf = map[string]workflows.Delegator{"mem_e": {ID: "mem_req", Name: "Rita"}}
	h.update(time.Minute, "delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_req",
		DelegatorName: "Rita", DelegateID: "mem_d", DelegateName: "Dee"})
	h.update(2*time.Minute, "dee", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_d", Decision: workflows.DecisionApprove})
	h.update(3*time.Minute, "eve", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_e", Decision: workflows.DecisionApprove})
	h.update(4*time.Minute, "ann-delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a",
		DelegatorName: "Ann", DelegateID: "mem_f", DelegateName: "Fay"})
	h.update(5*time.Minute, "fay", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_f", Decision: workflows.DecisionApprove})
	h.update(6*time.Minute, "ann", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_a", Decision: workflows.DecisionApprove})
	h.update(7*time.Minute, "after-ann", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a",
		DelegatorName: "Ann", DelegateID: "mem_g", DelegateName: "Gil"})
	h.update(8*time.Minute, "bob", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_b", Decision: workflows.DecisionApprove})
	s := h.run(in)

	require.NoError(t, h.results["delegate"].err, "the requester's delegate is asked (and refused when deciding)")
	h.refusedWith("dee", apperr.NotAnApprover)
	assert.Contains(t, h.results["dee"].err.Error(), "you stand in for Rita, who created this request")
	h.refusedWith("eve", apperr.NotAnApprover)
	require.NoError(t, h.results["fay"].err)
	h.refusedWith("ann", apperr.InvalidState)
	h.refusedWith("after-ann", apperr.AlreadyDecided)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_f", "mem_b"}, s.ApprovedBy)
	assert.Nil(t, s.DecidedOnBehalfOf, "Bob settled it in his own name")
}

// TestDelegateOfADelegateStandsInForTheFirst: a delegate who is away in
// turn hands on what they were asked on someone's behalf: the next one
// stands in for the person first asked.
func TestDelegateOfADelegateStandsInForTheFirst(t *testing.T) {
	h := newHarness(t)
	h.update(time.Minute, "ann", workflows.UpdateAddDelegate, annAway)
	h.update(2*time.Minute, "dee", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_d",
		DelegatorName: "Dee", DelegateID: "mem_h", DelegateName: "Hal"})
	h.update(3*time.Minute, "hal", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_h", Decision: workflows.DecisionReject})
	s := h.run(baseInput())
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.DecidedOnBehalfOf)
	assert.Equal(t, "Dee is away, so Hal was asked on behalf of Ann", h.transitions[2].Detail)
}

// TestDelegateJoinsAWaitingCollection: the delegate is asked and emailed;
// their reply is on Ann's behalf, and Ann's own is then refused.
func TestDelegateJoinsAWaitingCollection(t *testing.T) {
	h := newCollectionHarness(t)
	h.update(time.Minute, "delegate", workflows.UpdateAddDelegate, annAway)
	h.update(2*time.Minute, "dee", workflows.UpdateSubmitReply, reply("mem_d", `{"budget":1,"vendor":"Acme"}`))
	h.update(3*time.Minute, "ann", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":2,"vendor":"Acme"}`))
	h.update(4*time.Minute, "bob", workflows.UpdateSubmitReply, reply("mem_b", `{"budget":3,"vendor":"Globex"}`))
	s := h.run(collectionInput(t))

	require.NoError(t, h.results["delegate"].err)
	h.refusedWith("ann", apperr.AlreadySubmitted)
	assert.Equal(t, states.Complete, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_c", "mem_d"}, s.RespondentIDs)
	require.Len(t, s.Replies, 2)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.Replies[0].OnBehalfOf)
	assert.Nil(t, s.Replies[1].OnBehalfOf)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionDelegated, workflows.ActionReplied, workflows.ActionReplied}, h.actions())
	assert.Equal(t, "on behalf of Ann", h.transitions[2].Detail)
	assert.Len(t, h.emails, 2, "at creation, and the delegate")
}

// TestDelegateJoinsAWaitingReview: the delegate's verdict is on Ann's
// behalf; a delegate for a reviewer who already returned hers is refused.
func TestDelegateJoinsAWaitingReview(t *testing.T) {
	h := newReviewHarness(t)
	h.update(time.Minute, "b-verdict", workflows.UpdateVerdict, verdict("mem_b", workflows.VerdictApproved, ""))
	h.update(2*time.Minute, "b-delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_b", DelegateID: "mem_e"})
	h.update(3*time.Minute, "delegate", workflows.UpdateAddDelegate, annAway)
	h.update(4*time.Minute, "dee", workflows.UpdateVerdict, verdict("mem_d", workflows.VerdictApproved, "good"))
	s := h.run(reviewInput(2))

	h.refusedWith("b-delegate", apperr.AlreadyDecided)
	require.NoError(t, h.results["dee"].err)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.Verdicts[1].OnBehalfOf)
	assert.Equal(t, "2 of 2 approvals; on behalf of Ann; good", h.transitions[3].Detail)
	assert.Equal(t, 2, h.emails)
}

// TestEscalationAsksWhoStandsInForThoseAway: when the escalation fires,
// its person away (Bo, read then through the StandIns activity) is
// replaced by who stands in for them, who decides on Bo's behalf; the
// escalation's person not away joins as before.
func TestEscalationAsksWhoStandsInForThoseAway(t *testing.T) {
	h := newHarness(t)
	h.standIns = map[string]workflows.AddDelegateRequest{
		"mem_boss": {DelegatorID: "mem_boss", DelegatorName: "Bo", DelegateID: "mem_d", DelegateName: "Dee"}}
	in := baseInput()
	in.Escalation = &workflows.Escalation{At: start.Add(4 * time.Hour), ApproverIDs: []string{"mem_boss", "mem_c"}}
	h.update(5*time.Hour, "boss", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_boss", Decision: workflows.DecisionApprove})
	h.update(6*time.Hour, "dee", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_d", ActorName: "Dee", Decision: workflows.DecisionApprove})
	s := h.run(in)

	assert.Equal(t, []workflows.StandInsInput{{OrganizationID: "org_1", Requester: "mem_req", PersonIDs: []string{"mem_boss", "mem_c"}}},
		h.standInsAsked, "read when the escalation fires, for the request's requester")
	h.refusedWith("boss", apperr.NotAnApprover)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_d", "mem_c"}, s.ApproverIDs)
	assert.Equal(t, &workflows.Delegator{ID: "mem_boss", Name: "Bo"}, s.DecidedOnBehalfOf)
	esc := h.transitions[1]
	assert.Equal(t, workflows.ActionEscalated, esc.Action)
	assert.Equal(t, "still pending, so it was escalated: 2 more approvers asked; Bo is away, so Dee was asked on behalf of Bo", esc.Detail)
	assert.Equal(t, map[string]workflows.Delegator{"mem_d": {ID: "mem_boss", Name: "Bo"}}, esc.State.OnBehalfOf)
}

// TestEscalationNamingTheDelegateToo: an escalation naming both someone
// away and the one who stands in for them asks the latter in their own
// name, whichever it names first, as a request made now does.
func TestEscalationNamingTheDelegateToo(t *testing.T) {
	for _, named := range [][]string{{"mem_boss", "mem_d"}, {"mem_d", "mem_boss"}} {
		h := newHarness(t)
		h.standIns = map[string]workflows.AddDelegateRequest{
			"mem_boss": {DelegatorID: "mem_boss", DelegatorName: "Bo", DelegateID: "mem_d", DelegateName: "Dee"}}
		in := baseInput()
		in.Escalation = &workflows.Escalation{At: start.Add(4 * time.Hour), ApproverIDs: named}
		h.update(5*time.Hour, "dee", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_d", ActorName: "Dee", Decision: workflows.DecisionApprove})
		s := h.run(in)

		assert.Equal(t, states.Approved, s.Status, "%v", named)
		assert.Equal(t, []string{"mem_a", "mem_b", "mem_d"}, s.ApproverIDs, "%v", named)
		assert.Nil(t, s.DecidedOnBehalfOf, "Dee decided in her own name: %v", named)
		assert.Equal(t, "still pending, so it was escalated: 1 more approvers asked", h.transitions[1].Detail, "%v", named)
	}
}

// TestDefaultsStandInForThoseAway: defaults the caller replaced by who
// stands in for an owner away join standing in for them, and decide on
// their behalf.
func TestDefaultsStandInForThoseAway(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"gst_g"}
	h.update(time.Minute, "remove", workflows.UpdateRemoveApprover, workflows.RemoveApproverRequest{PersonID: "gst_g",
		PersonName: "Gus", Defaults: []string{"mem_d", "mem_admin"}, OnBehalfOf: map[string]workflows.Delegator{"mem_d": {ID: "mem_owner", Name: "Olivia"}},
		ActorID: "key_admin", ActorName: "admin key"})
	h.update(2*time.Minute, "dee", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_d", Decision: workflows.DecisionReject})
	s := h.run(in)

	require.NoError(t, h.results["remove"].err)
	assert.Equal(t, []string{"mem_d", "mem_admin"}, s.ApproverIDs)
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_owner", Name: "Olivia"}, s.DecidedOnBehalfOf)

	r := newReviewHarness(t)
	rin := reviewInput(1)
	rin.ReviewerIDs = []string{"gst_g"}
	r.update(time.Minute, "remove", workflows.UpdateRemoveReviewer, workflows.RemoveReviewerRequest{PersonID: "gst_g",
		PersonName: "Gus", Defaults: []string{"mem_d"}, OnBehalfOf: map[string]workflows.Delegator{"mem_d": {ID: "mem_owner", Name: "Olivia"}}})
	r.update(2*time.Minute, "dee", workflows.UpdateVerdict, verdict("mem_d", workflows.VerdictApproved, ""))
	rs := r.run(rin)
	assert.Equal(t, states.Approved, rs.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_owner", Name: "Olivia"}, rs.Verdicts[0].OnBehalfOf)
}
