package approvals_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// TestDelegateJoinsAWaitingApproval: a delegation that starts while the
// approval waits on Ann asks Dee too, who is emailed as escalated people
// are, and whose approval is in her own name on Ann's behalf. Ann's
// repeat, a stranger's and one once Dee is asked change nothing.
func TestDelegateJoinsAWaitingApproval(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Minute, "delegate", workflows.UpdateAddDelegate, workflowtest.AnnAway)
	h.Update(2*time.Minute, "again", workflows.UpdateAddDelegate, workflowtest.AnnAway)
	h.Update(3*time.Minute, "stranger", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_x", DelegateID: "mem_y"})
	h.Update(4*time.Minute, "dee", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_d", ActorName: "Dee",
		Decision: approvals.DecisionApprove, Note: "fine"})
	s := h.run(baseInput())

	require.NoError(t, h.Results["delegate"].Err)
	h.RefusedWith("again", apperr.Conflict)
	h.RefusedWith("stranger", apperr.NotAnApprover)
	assert.True(t, h.Results["again"].Refused && h.Results["stranger"].Refused, "refused by the validator: no trace in the history")
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_d"}, s.ApproverIDs, "Ann stays asked beside Dee")
	assert.Equal(t, map[string]workflows.Delegator{"mem_d": {ID: "mem_a", Name: "Ann"}}, s.OnBehalfOf)
	assert.Equal(t, "mem_d", s.DecidedByID)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.DecidedOnBehalfOf)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionDelegated, approvals.ActionApproved}, h.Actions())
	delegated := h.Transitions[1]
	assert.Equal(t, "mem_a", delegated.ActorID, "who set the delegation")
	assert.Equal(t, "Ann is away, so Dee was asked on behalf of Ann", delegated.Detail)
	assert.Empty(t, delegated.Event, "the timeline only")
	assert.Equal(t, "on behalf of Ann; fine", h.Transitions[2].Detail)
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
	h.Update(time.Minute, "delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_req",
		DelegatorName: "Rita", DelegateID: "mem_d", DelegateName: "Dee"})
	h.Update(2*time.Minute, "dee", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_d", Decision: approvals.DecisionApprove})
	h.Update(3*time.Minute, "eve", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_e", Decision: approvals.DecisionApprove})
	h.Update(4*time.Minute, "ann-delegate", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a",
		DelegatorName: "Ann", DelegateID: "mem_f", DelegateName: "Fay"})
	h.Update(5*time.Minute, "fay", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_f", Decision: approvals.DecisionApprove})
	h.Update(6*time.Minute, "ann", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: approvals.DecisionApprove})
	h.Update(7*time.Minute, "after-ann", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_a",
		DelegatorName: "Ann", DelegateID: "mem_g", DelegateName: "Gil"})
	h.Update(8*time.Minute, "bob", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", Decision: approvals.DecisionApprove})
	s := h.run(in)

	require.NoError(t, h.Results["delegate"].Err, "the requester's delegate is asked (and refused when deciding)")
	h.RefusedWith("dee", apperr.NotAnApprover)
	assert.Contains(t, h.Results["dee"].Err.Error(), "you stand in for Rita, who created this request")
	h.RefusedWith("eve", apperr.NotAnApprover)
	require.NoError(t, h.Results["fay"].Err)
	h.RefusedWith("ann", apperr.InvalidState)
	h.RefusedWith("after-ann", apperr.AlreadyDecided)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_f", "mem_b"}, s.ApprovedBy)
	assert.Nil(t, s.DecidedOnBehalfOf, "Bob settled it in his own name")
}

// TestDelegateOfADelegateStandsInForTheFirst: a delegate who is away in
// turn hands on what they were asked on someone's behalf: the next one
// stands in for the person first asked.
func TestDelegateOfADelegateStandsInForTheFirst(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Minute, "ann", workflows.UpdateAddDelegate, workflowtest.AnnAway)
	h.Update(2*time.Minute, "dee", workflows.UpdateAddDelegate, workflows.AddDelegateRequest{DelegatorID: "mem_d",
		DelegatorName: "Dee", DelegateID: "mem_h", DelegateName: "Hal"})
	h.Update(3*time.Minute, "hal", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_h", Decision: approvals.DecisionReject})
	s := h.run(baseInput())
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.DecidedOnBehalfOf)
	assert.Equal(t, "Dee is away, so Hal was asked on behalf of Ann", h.Transitions[2].Detail)
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
	in.Escalation = &approvals.ScheduledEscalation{At: workflowtest.Start.Add(4 * time.Hour), ApproverIDs: []string{"mem_boss", "mem_c"}}
	h.Update(5*time.Hour, "boss", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_boss", Decision: approvals.DecisionApprove})
	h.Update(6*time.Hour, "dee", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_d", ActorName: "Dee", Decision: approvals.DecisionApprove})
	s := h.run(in)

	assert.Equal(t, []approvals.StandInsInput{{OrganizationID: "org_1", Requester: "mem_req", PersonIDs: []string{"mem_boss", "mem_c"}}},
		h.standInsAsked, "read when the escalation fires, for the request's requester")
	h.RefusedWith("boss", apperr.NotAnApprover)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_d", "mem_c"}, s.ApproverIDs)
	assert.Equal(t, &workflows.Delegator{ID: "mem_boss", Name: "Bo"}, s.DecidedOnBehalfOf)
	esc := h.Transitions[1]
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
		in.Escalation = &approvals.ScheduledEscalation{At: workflowtest.Start.Add(4 * time.Hour), ApproverIDs: named}
		h.Update(5*time.Hour, "dee", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_d", ActorName: "Dee", Decision: approvals.DecisionApprove})
		s := h.run(in)

		assert.Equal(t, states.Approved, s.Status, "%v", named)
		assert.Equal(t, []string{"mem_a", "mem_b", "mem_d"}, s.ApproverIDs, "%v", named)
		assert.Nil(t, s.DecidedOnBehalfOf, "Dee decided in her own name: %v", named)
		assert.Equal(t, "still pending, so it was escalated: 1 more approvers asked", h.Transitions[1].Detail, "%v", named)
	}
}

// TestDefaultsStandInForThoseAway: default approvers the caller replaced
// by who stands in for an owner away join standing in for them, and decide
// on their behalf.
func TestDefaultsStandInForThoseAway(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"gst_g"}
	h.Update(time.Minute, "remove", approvals.UpdateRemoveApprover, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "Gus", Defaults: []string{"mem_d", "mem_admin"}, OnBehalfOf: map[string]workflows.Delegator{"mem_d": {ID: "mem_owner", Name: "Olivia"}},
		ActorID: "key_admin", ActorName: "admin key"})
	h.Update(2*time.Minute, "dee", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_d", Decision: approvals.DecisionReject})
	s := h.run(in)

	require.NoError(t, h.Results["remove"].Err)
	assert.Equal(t, []string{"mem_d", "mem_admin"}, s.ApproverIDs)
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, &workflows.Delegator{ID: "mem_owner", Name: "Olivia"}, s.DecidedOnBehalfOf)

}
