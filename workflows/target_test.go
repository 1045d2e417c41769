package workflows_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// olderClient, as an argument's RequestID, has addressed send it naming no
// request, as a client from before arguments named theirs did.
const olderClient = "(an older client's: none)"

// addressed returns arg, an Update's argument, addressed to request id as
// requests.Records.Update sends it, unless it already names a request.
func addressed(id string, arg any) any {
	v := reflect.New(reflect.TypeOf(arg))
	v.Elem().Set(reflect.ValueOf(arg))
	switch field := v.Elem().FieldByName("RequestID"); field.String() {
	case "":
		v.Interface().(workflows.Argument).For(id)
	case olderClient:
		field.SetString("")
	}
	return v.Elem().Interface()
}

// perRound names a round's Updates apart from another's: Update ids are
// unique in a workflow.
func perRound(i int) (key func(string) string, keys func(...string) []string) {
	key = func(name string) string { return fmt.Sprintf("%s-%d", name, i) }
	keys = func(names ...string) []string {
		out := make([]string, len(names))
		for j, n := range names {
			out[j] = key(n)
		}
		return out
	}
	return key, keys
}

func addressedAll(id string, args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = addressed(id, a)
	}
	return out
}

// other and none are the two ways an argument can be for another request
// than the one it reaches: copied from another's Update, or from a client
// older than request ids in arguments (whose Updates in flight are already
// in histories, and replay without validators).
var (
	other = workflows.Target{RequestID: "req_other"}
	none  = workflows.Target{RequestID: olderClient}
)

// Every Update of an approval refuses an argument naming another
// approval, or none, and changes nothing: the approval expires pending.
func TestApprovalUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"mem_a", "gst_g"}
	for i, target := range []workflows.Target{other, none} {
		at := time.Duration(i+1) * time.Hour
		key, keys := perRound(i)
		h.update(at, key("decide"), workflows.UpdateDecide, workflows.DecideRequest{Target: target, ActorID: "mem_a", Decision: "approve"})
		h.update(at+time.Minute, key("ask"), workflows.UpdateAsk, workflows.AskRequest{Target: target, ActorID: "mem_a", QuestionID: "qst_1", Question: "?"})
		h.update(at+2*time.Minute, key("answer"), workflows.UpdateAnswer, workflows.AnswerRequest{Target: target, Requester: "mem_req", QuestionID: "qst_1", Answer: "!"})
		h.update(at+3*time.Minute, key("cancel"), workflows.UpdateCancel, workflows.CancelRequest{Target: target, ActorID: "mem_x", Administrator: true})
		h.update(at+4*time.Minute, key("remove"), workflows.UpdateRemoveApprover, workflows.RemoveApproverRequest{Target: target, PersonID: "gst_g"})
		h.update(at+4*time.Minute+time.Second, key("delegate"), workflows.UpdateAddDelegate, workflows.AddDelegateRequest{Target: target,
			DelegatorID: "mem_a", DelegateID: "mem_d"})
		h.env.RegisterDelayedCallback(func() {
			for _, key := range keys("decide", "ask", "answer", "cancel", "remove", "delegate") {
				h.refusedWith(key, apperr.Forbidden)
				assert.True(t, h.results[key].refused, "%s was refused by the validator, before it reached the history", key)
			}
		}, at+5*time.Minute)
	}
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"mem_a", "gst_g"}, s.ApproverIDs)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionReminded, workflows.ActionExpired}, h.actions())
	assert.Empty(t, s.Questions)
}

func TestCollectionUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newCollectionHarness(t)
	for i, target := range []workflows.Target{other, none} {
		at := time.Duration(i+1) * time.Hour
		key, keys := perRound(i)
		r := reply("mem_a", `{"budget":1,"vendor":"Acme"}`)
		r.Target = target
		h.update(at, key("reply"), workflows.UpdateSubmitReply, r)
		h.update(at+time.Minute, key("cancel"), workflows.UpdateCancel, workflows.CancelRequest{Target: target, ActorID: "mem_x", Administrator: true})
		h.update(at+2*time.Minute, key("remove"), workflows.UpdateRemoveRespondent, workflows.RemoveRespondentRequest{Target: target, PersonID: "mem_b"})
		h.update(at+2*time.Minute+time.Second, key("delegate"), workflows.UpdateAddDelegate, workflows.AddDelegateRequest{Target: target,
			DelegatorID: "mem_a", DelegateID: "mem_d"})
		h.env.RegisterDelayedCallback(func() {
			for _, key := range keys("reply", "cancel", "remove", "delegate") {
				require.Error(t, h.results[key].err, key)
				assert.Equal(t, apperr.Forbidden, errType(h.results[key].err), "%s: %v", key, h.results[key].err)
			}
		}, at+3*time.Minute)
	}
	s := h.run(collectionInput(t))
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.Replies)
	assert.Len(t, s.RespondentIDs, 3)
}

func TestReviewUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newReviewHarness(t)
	for i, target := range []workflows.Target{other, none} {
		at := time.Duration(i+1) * time.Hour
		key, keys := perRound(i)
		v := verdict("mem_a", workflows.VerdictApproved, "")
		v.Target = target
		h.update(at, key("verdict"), workflows.UpdateVerdict, v)
		h.update(at+time.Minute, key("cancel"), workflows.UpdateCancel, workflows.CancelRequest{Target: target, ActorID: "mem_x", Administrator: true})
		h.update(at+2*time.Minute, key("remove"), workflows.UpdateRemoveReviewer, workflows.RemoveReviewerRequest{Target: target, PersonID: "mem_b"})
		h.update(at+2*time.Minute+time.Second, key("delegate"), workflows.UpdateAddDelegate, workflows.AddDelegateRequest{Target: target,
			DelegatorID: "mem_a", DelegateID: "mem_d"})
		h.env.RegisterDelayedCallback(func() {
			for _, key := range keys("verdict", "cancel", "remove", "delegate") {
				require.Error(t, h.results[key].err, key)
				assert.Equal(t, apperr.Forbidden, errType(h.results[key].err), "%s: %v", key, h.results[key].err)
			}
		}, at+3*time.Minute)
	}
	s := h.run(reviewInput(1))
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.Verdicts)
	assert.Len(t, s.ReviewerIDs, 3)
}

func TestHoldDecisionsForAnotherVersionAreRefused(t *testing.T) {
	h := newHoldHarness()
	h.decide(time.Hour, "other", workflows.HoldDecision{Target: other, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	h.decide(2*time.Hour, "none", workflows.HoldDecision{Target: none, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	out := h.run(start)
	assert.Equal(t, apperr.Forbidden, errType(h.results["other"]))
	assert.Equal(t, apperr.Forbidden, errType(h.results["none"]))
	assert.True(t, out.Timeout, "nobody released it: it was declined when its time ran out")
}

// An ask sent again (its payload copied onto the same approval, where both
// layers let it through) is refused: its question is already there.
func TestAnAskSentAgainIsRefused(t *testing.T) {
	h := newHarness(t)
	ask := workflows.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}
	h.update(time.Minute, "ask", workflows.UpdateAsk, ask)
	h.update(2*time.Minute, "answer", workflows.UpdateAnswer, workflows.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme"})
	h.update(3*time.Minute, "ask-again", workflows.UpdateAsk, ask)
	h.update(4*time.Minute, "decide", workflows.UpdateDecide, workflows.DecideRequest{ActorID: "mem_b", Decision: "approve"})
	s := h.run(baseInput())
	h.refusedWith("ask-again", apperr.Conflict)
	assert.Equal(t, states.Approved, s.Status, "no unanswerable question blocks the decision")
	assert.Len(t, s.Questions, 1)
}
