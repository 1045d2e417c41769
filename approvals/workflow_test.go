package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// harness runs the approval workflow in the test environment with a
// recording persistence activity.
type harness struct {
	*workflowtest.Harness[approvals.State]
	emails []email
	// failEmails, when set, is every email attempt's error.
	failEmails error
	// standIns answers the StandIns activity: who stands in for each
	// person away, by person away.
	standIns map[string]workflows.AddDelegateRequest
	// standInsAsked are the inputs the StandIns activity got.
	standInsAsked []approvals.StandInsInput
}

func newHarness(t *testing.T) *harness {
	h := &harness{Harness: workflowtest.New[approvals.State](t, approvals.Workflow, approvals.ActivityPersist)}
	h.Env.RegisterActivityWithOptions(func(ctx context.Context, in approvals.EmailApproversInput) error {
		return h.sent(ctx, in)
	}, activity.RegisterOptions{Name: approvals.ActivityEmailApprovers})
	h.Env.RegisterActivityWithOptions(func(ctx context.Context, in approvals.EmailAnswerInput) error {
		return h.sent(ctx, in)
	}, activity.RegisterOptions{Name: approvals.ActivityEmailAnswer})
	h.Env.RegisterActivityWithOptions(func(_ context.Context, in approvals.StandInsInput) (approvals.StandInsResult, error) {
		h.Mu.Lock()
		defer h.Mu.Unlock()
		h.standInsAsked = append(h.standInsAsked, in)
		var out approvals.StandInsResult
		for _, id := range in.PersonIDs {
			if r, ok := h.standIns[id]; ok {
				out.StandIns = append(out.StandIns, r)
			}
		}
		return out, nil
	}, activity.RegisterOptions{Name: workflows.ActivityStandIns})
	return h
}

// email is one attempt of an email activity.
type email struct {
	input   any
	attempt int32
	at      time.Time
}

// sent records an email attempt and answers with failEmails.
func (h *harness) sent(ctx context.Context, in any) error {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	h.emails = append(h.emails, email{input: in, attempt: activity.GetInfo(ctx).Attempt, at: h.Env.Now().UTC()})
	return h.failEmails
}

func baseInput() approvals.WorkflowInput {
	return approvals.WorkflowInput{
		RequestInput:      workflows.RequestInput{OrganizationID: "org_1", ExpiresAt: workflowtest.Start.Add(24 * time.Hour), Requester: "mem_req"},
		ApprovalID:        "apr_1",
		Risk:              "medium",
		RequiredApprovals: 1,
		ApproverIDs:       []string{"mem_a", "mem_b"},
		RequesterMemberID: "mem_req",
		Input:             json.RawMessage(`{"amount":100,"currency":"EUR","urgent":false,"memo":"x","big":12345678901234567890}`),
		EditableFields:    []string{"amount", "urgent", "memo"},
	}
}

func (h *harness) run(in approvals.WorkflowInput) approvals.State {
	return h.RunAs(in.ApprovalID, in)
}

func TestApprovalExpiresAtTheExactInstant(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ExpiresAt = workflowtest.Start.Add(90 * time.Minute)
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	require.Len(t, h.Transitions, 2)
	assert.Equal(t, "approval.requested", h.Transitions[0].Event)
	assert.Equal(t, "approval.expired", h.Transitions[1].Event)
	assert.Equal(t, in.ExpiresAt, h.Transitions[1].At, "expired exactly at expiresAt")
}

func TestQuestionBlocksDecisionsUntilAnswered(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Minute, "ask", approvals.UpdateAsk, approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"})
	h.Update(2*time.Minute, "ask-again", approvals.UpdateAsk, approvals.AskRequest{ActorID: "mem_b", QuestionID: "qst_2", Question: "And?"})
	h.Update(3*time.Minute, "decide-blocked", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", Decision: "approve"})
	h.Update(4*time.Minute, "answer-unknown", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_9", Answer: "?"})
	h.Update(4*time.Minute+30*time.Second, "answer-by-approver", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_a", QuestionID: "qst_1", Answer: "Me"})
	h.Update(5*time.Minute, "answer", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"})
	h.Update(6*time.Minute, "answer-twice", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Other"})
	h.Update(7*time.Minute, "decide", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: "approve"})
	s := h.run(baseInput())

	h.RefusedWith("ask-again", apperr.QuestionPending)
	h.RefusedWith("decide-blocked", apperr.QuestionPending)
	h.RefusedWith("answer-unknown", apperr.QuestionNotFound)
	h.RefusedWith("answer-twice", apperr.AlreadyAnswered)
	h.RefusedWith("answer-by-approver", apperr.NotTheRequester)
	assert.Equal(t, states.Approved, s.Status)
	require.Len(t, s.Questions, 1)
	require.NotNil(t, s.Questions[0].Answer)
	assert.Equal(t, "Acme Ltd", *s.Questions[0].Answer, "the first answer stays readable")
	assert.Equal(t, workflowtest.Start.Add(5*time.Minute), *s.Questions[0].AnsweredAt)
	assert.Equal(t, []string{"created", "asked", "answered", "approved"}, h.Actions())
	assert.Equal(t, "approval.question", h.Transitions[1].Event)
	for i, tr := range h.Transitions {
		assert.Equal(t, i+1, tr.Seq, "transitions are numbered in order")
	}
}

func TestSeveralApprovalsAreCountedPerPerson(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.RequiredApprovals = 2
	h.Update(time.Minute, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve",
		Corrections: workflowtest.Raw(`{"amount":80}`)})
	h.Update(2*time.Minute, "a-again", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(3*time.Minute, "b", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: "approve",
		Corrections: workflowtest.Raw(`{"amount":70}`)})
	s := h.run(in)

	assert.Equal(t, 1, h.Results["a"].State.ApprovalsSoFar)
	assert.Equal(t, states.Pending, h.Results["a"].State.Status)
	h.RefusedWith("a-again", apperr.InvalidState)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, 2, s.ApprovalsSoFar)
	assert.Equal(t, in.Input, s.ApprovedInput, "several approvers approve the proposal as sent")
	assert.Empty(t, s.Changes)
	assert.Equal(t, "mem_b", s.DecidedByID)
	// The first approval is audited without an event; the settling one emits approval.approved.
	require.Len(t, h.Transitions, 3)
	assert.Equal(t, "", h.Transitions[1].Event)
	assert.Equal(t, "approval.approved", h.Transitions[2].Event)
}

func TestOneRejectionSettlesRegardlessOfRequiredApprovals(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.RequiredApprovals = 2
	h.Update(time.Minute, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(2*time.Minute, "b", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", ActorName: "Ben", Decision: "reject", Note: "too costly"})
	s := h.run(in)
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, "too costly", s.Note)
	assert.Equal(t, "Ben", s.DecidedByName)
	assert.Equal(t, workflowtest.Start.Add(2*time.Minute), *s.DecidedAt)
	// A settled workflow completes; the API answers later updates from the
	// record with 409 invalid_state.
}

func TestCorrectionsRules(t *testing.T) {
	cases := []struct {
		name        string
		corrections string
		field       string
	}{
		{"not editable", `{"currency":"USD"}`, "corrections.currency"},
		{"added field", `{"extra":1}`, "corrections.extra"},
		{"type change", `{"amount":"eighty"}`, "corrections.amount"},
		{"not flat", `{"amount":{"v":1}}`, "corrections.amount"},
		{"null", `{"amount":null}`, "corrections.amount"},
		{"bool to number", `{"urgent":1}`, "corrections.urgent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.Update(time.Minute, "bad", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve", Corrections: workflowtest.Raw(tc.corrections)})
			h.Update(2*time.Minute, "cancel", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"})
			s := h.run(baseInput())
			h.RefusedWith("bad", apperr.InvalidRequest)
			var app *temporal.ApplicationError
			require.True(t, errors.As(h.Results["bad"].Err, &app))
			var field string
			require.NoError(t, app.Details(&field))
			assert.Equal(t, tc.field, field)
			assert.Equal(t, states.Cancelled, s.Status)
		})
	}

	t.Run("applied when one approval settles", func(t *testing.T) {
		h := newHarness(t)
		h.Update(time.Minute, "ok", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", ActorName: "Ann", Decision: "approve",
			Corrections: workflowtest.Raw(`{"amount":80.50,"urgent":false,"memo":"\u0078"}`)})
		s := h.run(baseInput())
		assert.Equal(t, states.Approved, s.Status)
		assert.JSONEq(t, `{"amount":80.50,"currency":"EUR","urgent":false,"memo":"x","big":12345678901234567890}`, string(s.ApprovedInput))
		assert.Contains(t, string(s.ApprovedInput), `"amount":80.50`, "a correction keeps the digits sent")
		assert.Contains(t, string(s.ApprovedInput), "12345678901234567890", "untouched numbers stay exact")
		assert.Equal(t, []approvals.AppliedChange{{Field: "amount", From: json.RawMessage("100"), To: json.RawMessage("80.50")}}, s.Changes,
			"an unchanged value (the same boolean, the same string spelled otherwise) is no change")
	})

	t.Run("the same number written otherwise is no change", func(t *testing.T) {
		h := newHarness(t)
		h.Update(time.Minute, "ok", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", ActorName: "Ann", Decision: "approve",
			Corrections: workflowtest.Raw(`{"amount":100.0}`)})
		s := h.run(baseInput())
		assert.Empty(t, s.Changes)
		assert.Equal(t, baseInput().Input, s.ApprovedInput, "nothing changed: the input as sent")
	})
}

func TestWhoMayDecide(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = append(in.ApproverIDs, "mem_req")
	in.ReasonRequired = true
	h.Update(time.Minute, "stranger", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_x", Decision: "reject"})
	h.Update(2*time.Minute, "requester", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_req", Decision: "approve", Reason: "mine"})
	h.Update(3*time.Minute, "no-reason", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(4*time.Minute, "bad-decision", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "maybe"})
	h.Update(5*time.Minute, "with-reason", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve", Reason: "checked with legal"})
	s := h.run(in)
	h.RefusedWith("stranger", apperr.NotAnApprover)
	h.RefusedWith("requester", apperr.NotAnApprover)
	h.RefusedWith("no-reason", apperr.InvalidRequest)
	h.RefusedWith("bad-decision", apperr.InvalidRequest)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, "checked with legal", s.Reason)
}

func TestCancelWithdrawsAPendingApproval(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Hour, "cancel", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"})
	s := h.run(baseInput())
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "cancelled"}, h.Actions())
	assert.Equal(t, workflowtest.Start.Add(time.Hour), h.Transitions[1].At)
}

// TestOnlyTheRequesterOrAnAdministratorCancels: anyone else is refused with
// 403 and the request stays pending; an owner or administrator may, and
// the timeline says for whom.
func TestOnlyTheRequesterOrAnAdministratorCancels(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Minute, "other agent", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "key_other", ActorName: "other agent"})
	h.Update(2*time.Minute, "approver", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_a", ActorName: "Ann"})
	h.Update(3*time.Minute, "owner", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_owner", ActorName: "Olivia", Administrator: true})
	s := h.run(baseInput())
	h.RefusedWith("other agent", apperr.Forbidden)
	h.RefusedWith("approver", apperr.Forbidden)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "cancelled"}, h.Actions())
	assert.Equal(t, "mem_owner", h.Transitions[1].ActorID)
	assert.Equal(t, workflows.CancelledForRequester, h.Transitions[1].Detail)
}

// An Update can be delivered in the workflow's first task, before the main
// function has written "created"; it must still be written after it.
func TestUpdateAtStartIsWrittenAfterCreated(t *testing.T) {
	h := newHarness(t)
	h.Update(0, "ask", approvals.UpdateAsk, approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Now?"})
	h.Update(time.Minute, "cancel", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"})
	s := h.run(baseInput())
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "asked", "cancelled"}, h.Actions())
	for i, tr := range h.Transitions {
		assert.Equal(t, i+1, tr.Seq)
	}
}

// TestRemovedApproverCannotDecide: a removed guest is off the approvers at
// once; the others remain, so no defaults are added and nobody is emailed
// again.
func TestRemovedApproverCannotDecide(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"gst_g", "mem_a"}
	remove := workflows.RemoveAskedRequest{PersonID: "gst_g", PersonName: "gus@partner.example",
		Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"}
	h.Update(time.Minute, "remove", approvals.UpdateRemoveApprover, remove)
	h.Update(2*time.Minute, "remove-again", approvals.UpdateRemoveApprover, remove)
	h.Update(3*time.Minute, "guest", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "gst_g", Decision: "approve"})
	h.Update(4*time.Minute, "ann", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", ActorName: "Ann", Decision: "approve"})
	s := h.run(in)

	h.RefusedWith("remove-again", apperr.NotAnApprover)
	h.RefusedWith("guest", apperr.NotAnApprover)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"mem_a"}, s.ApproverIDs)
	assert.Equal(t, []string{"created", approvals.ActionApproverRemoved, "approved"}, h.Actions())
	removed := h.Transitions[1]
	assert.Equal(t, "removed gus@partner.example from the approvers", removed.Detail)
	assert.Equal(t, "key_admin", removed.ActorID)
	assert.Empty(t, removed.Event, "no event kind for it: the timeline only")
	assert.Equal(t, []string{"mem_a"}, removed.State.ApproverIDs, "the read model learns it through the persist path")
	assert.Len(t, h.emails, 1, "only the email at creation")
}

// TestRemovingTheLastApproverFallsBackToTheDefaults: with nobody left who
// could approve, the owners and administrators become approvers, the
// timeline says so, and they are emailed as at creation.
func TestRemovingTheLastApproverFallsBackToTheDefaults(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"gst_g", "mem_req"} // the requester cannot decide their own request
	h.Update(time.Minute, "remove", approvals.UpdateRemoveApprover, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "gus@partner.example", Defaults: []string{"mem_owner", "mem_req", "mem_admin"}, ActorID: "mem_owner", ActorName: "Olivia"})
	h.Update(2*time.Minute, "admin", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_admin", ActorName: "Al", Decision: "reject"})
	s := h.run(in)

	require.NoError(t, h.Results["remove"].Err)
	assert.Equal(t, []string{"mem_req", "mem_owner", "mem_admin"}, h.Results["remove"].State.ApproverIDs)
	assert.Equal(t, states.Rejected, s.Status)
	assert.Equal(t, "removed gus@partner.example from the approvers; "+approvals.DefaultApproversAdded, h.Transitions[1].Detail)
	require.Len(t, h.emails, 2, "the new approvers are emailed through the same activity as at creation")
	assert.Equal(t, h.emails[0].input, h.emails[1].input)
}

// TestDefaultsJoinWhenTooFewCanApprove: with two approvals needed and one
// given, removing one of the two others leaves too few, so the defaults
// join; a settled request refuses the removal.
func TestDefaultsJoinWhenTooFewCanApprove(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.RequiredApprovals = 3
	in.ApproverIDs = []string{"mem_a", "mem_b", "gst_g"}
	h.Update(time.Minute, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	h.Update(2*time.Minute, "remove", approvals.UpdateRemoveApprover, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "Gus", Defaults: []string{"mem_owner"}, ActorID: "key_admin", ActorName: "admin key"})
	h.Update(3*time.Minute, "cancel", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_req", ActorName: "Requester"})
	h.Update(4*time.Minute, "remove-settled", approvals.UpdateRemoveApprover, workflows.RemoveAskedRequest{PersonID: "mem_b"})
	s := h.run(in)

	assert.Equal(t, []string{"mem_a", "mem_b", "mem_owner"}, s.ApproverIDs)
	assert.Contains(t, h.Transitions[2].Detail, approvals.DefaultApproversAdded)
	assert.Equal(t, states.Cancelled, s.Status)
	// The workflow completed with the cancel; a later Update finds no
	// running workflow, which the service reads as settled.
	_, ran := h.Results["remove-settled"]
	assert.False(t, ran && h.Results["remove-settled"].Err == nil)
}

// TestNoDefaultsToAddSaysNothingOfThem: an organisation without an owner
// or administrator gives the request nobody; the timeline does not claim
// otherwise, and the request waits for its expiry.
func TestNoDefaultsToAddSaysNothingOfThem(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"gst_g"}
	h.Update(time.Minute, "remove", approvals.UpdateRemoveApprover, workflows.RemoveAskedRequest{PersonID: "gst_g",
		PersonName: "Gus", ActorID: "operator", ActorName: "the operator"})
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.ApproverIDs)
	assert.Equal(t, "removed Gus from the approvers", h.Transitions[1].Detail)
	assert.Len(t, h.emails, 1)
}

func TestApprovalUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ApproverIDs = []string{"mem_a", "gst_g"}
	h.RefusesOtherRequests(approvals.UpdateRemoveApprover, func(target workflows.Target) map[string]workflowtest.Sent {
		return map[string]workflowtest.Sent{
			"decide": {Name: approvals.UpdateDecide, Arg: approvals.DecideRequest{Target: target, ActorID: "mem_a", Decision: "approve"}},
			"ask":    {Name: approvals.UpdateAsk, Arg: approvals.AskRequest{Target: target, ActorID: "mem_a", QuestionID: "qst_1", Question: "?"}},
			"answer": {Name: approvals.UpdateAnswer, Arg: approvals.AnswerRequest{Target: target, Requester: "mem_req", QuestionID: "qst_1", Answer: "!"}},
		}
	})
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"mem_a", "gst_g"}, s.ApproverIDs)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionReminded, workflows.ActionExpired}, h.Actions())
	assert.Empty(t, s.Questions)
}

// An ask sent again (its payload copied onto the same approval, where both
// layers let it through) is refused: its question is already there.
func TestAnAskSentAgainIsRefused(t *testing.T) {
	h := newHarness(t)
	ask := approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"}
	h.Update(time.Minute, "ask", approvals.UpdateAsk, ask)
	h.Update(2*time.Minute, "answer", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme"})
	h.Update(3*time.Minute, "ask-again", approvals.UpdateAsk, ask)
	h.Update(4*time.Minute, "decide", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", Decision: "approve"})
	s := h.run(baseInput())
	h.RefusedWith("ask-again", apperr.Conflict)
	assert.Equal(t, states.Approved, s.Status, "no unanswerable question blocks the decision")
	assert.Len(t, s.Questions, 1)
}

// The "created" write runs as a local activity in the workflow task and
// is retried until the database takes it, past its first attempt's
// deadline (in later tasks, from a timer, once the waits grow); a decision
// sent meanwhile waits for it, and the request is created once.
func TestTheCreatedWriteIsRetriedUntilWritten(t *testing.T) {
	h := newHarness(t)
	var inTask []bool // each attempt at "created": whether inside the task
	h.Env.OnActivity(approvals.ActivityPersist, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, tr approvals.Transition) (workflows.Persisted, error) {
			if tr.Action == workflows.ActionCreated {
				inTask = append(inTask, activity.GetInfo(ctx).IsLocalActivity)
				if len(inTask) <= 8 { // about two minutes of retries
					return workflows.Persisted{}, errors.New("the database is down")
				}
			}
			h.Mu.Lock()
			defer h.Mu.Unlock()
			h.Transitions = append(h.Transitions, tr)
			return workflows.Persisted{Emailed: tr.AskByEmail}, nil
		})
	h.Update(time.Millisecond, "decide", approvals.UpdateDecide,
		approvals.DecideRequest{ActorID: "mem_a", ActorName: "Ann", Decision: approvals.DecisionApprove})
	s := h.RunAs("apr_1", baseInput())
	assert.Equal(t, slices.Repeat([]bool{true}, 9), inTask, "every attempt at created is a local activity")
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, []string{"created", "approved"}, h.Actions())
	assert.Empty(t, h.emails, "the created write emailed everyone")
}
