package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

func TestApprovalUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"mem_a", "gst_g"}
	for i, target := range []workflows.Target{workflowtest.Other, workflowtest.None} {
		at := time.Duration(i+1) * time.Hour
		key, keys := workflowtest.PerRound(i)
		h.Update(at, key("decide"), workflows.UpdateDecide, workflows.DecideRequest{Target: target, ActorID: "mem_a", Decision: "approve"})
		h.Update(at+time.Minute, key("ask"), workflows.UpdateAsk, workflows.AskRequest{Target: target, ActorID: "mem_a", QuestionID: "qst_1", Question: "?"})
		h.Update(at+2*time.Minute, key("answer"), workflows.UpdateAnswer, workflows.AnswerRequest{Target: target, Requester: "mem_req", QuestionID: "qst_1", Answer: "!"})
		h.Update(at+3*time.Minute, key("cancel"), workflows.UpdateCancel, workflows.CancelRequest{Target: target, ActorID: "mem_x", Administrator: true})
		h.Update(at+4*time.Minute, key("remove"), workflows.UpdateRemoveApprover, workflows.RemoveApproverRequest{Target: target, PersonID: "gst_g"})
		h.Update(at+4*time.Minute+time.Second, key("delegate"), workflows.UpdateAddDelegate, workflows.AddDelegateRequest{Target: target,
			DelegatorID: "mem_a", DelegateID: "mem_d"})
		h.Env.RegisterDelayedCallback(func() {
			for _, key := range keys("decide", "ask", "answer", "cancel", "remove", "delegate") {
				h.RefusedWith(key, apperr.Forbidden)
				assert.True(t, h.Results[key].Refused, "%s was refused by the validator, before it reached the history", key)
			}
		}, at+5*time.Minute)
	}
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"mem_a", "gst_g"}, s.ApproverIDs)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionReminded, workflows.ActionExpired}, h.Actions())
	assert.Empty(t, s.Questions)
}

func TestHoldDecisionsForAnotherVersionAreRefused(t *testing.T) {
	h := newHoldHarness()
	h.decide(time.Hour, "other", workflows.HoldDecision{Target: workflowtest.Other, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	h.decide(2*time.Hour, "none", workflows.HoldDecision{Target: workflowtest.None, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	out := h.run(workflowtest.Start)
	assert.Equal(t, apperr.Forbidden, workflowtest.ErrType(h.Results["other"]))
	assert.Equal(t, apperr.Forbidden, workflowtest.ErrType(h.Results["none"]))
	assert.True(t, out.Timeout, "nobody released it: it was declined when its time ran out")
}

// An ask sent again (its payload copied onto the same approval, where both
// layers let it through) is refused: its question is already there.
func TestAnAskSentAgainIsRefused(t *testing.T) {
	h := newHarness(t)
	ask := workflows.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}
	h.Update(time.Minute, "ask", workflows.UpdateAsk, ask)
	h.Update(2*time.Minute, "answer", workflows.UpdateAnswer, workflows.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme"})
	h.Update(3*time.Minute, "ask-again", workflows.UpdateAsk, ask)
	h.Update(4*time.Minute, "decide", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_b", Decision: "approve"})
	s := h.run(baseInput())
	h.RefusedWith("ask-again", apperr.Conflict)
	assert.Equal(t, states.Approved, s.Status, "no unanswerable question blocks the decision")
	assert.Len(t, s.Questions, 1)
}
