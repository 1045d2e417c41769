package approvals_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

func TestApproversAreEmailedAtCreationAndAskersWhenAnswered(t *testing.T) {
	h := newHarness(t)
	h.Update(time.Minute, "ask", approvals.UpdateAsk, approvals.AskRequest{ActorID: "mem_a", ActorName: "Ann", QuestionID: "qst_1", Question: "Which vendor?"})
	h.Update(5*time.Minute, "answer", approvals.UpdateAnswer, approvals.AnswerRequest{Requester: "mem_req", QuestionID: "qst_1", Answer: "Acme Ltd"})
	h.Update(7*time.Minute, "decide", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_b", Decision: "reject"})
	s := h.run(baseInput())

	assert.Equal(t, states.Rejected, s.Status)
	require.Len(t, h.emails, 2)
	assert.Equal(t, approvals.EmailApproversInput{OrganizationID: "org_1", ApprovalID: "apr_1"}, h.emails[0].input)
	assert.Equal(t, workflowtest.Start, h.emails[0].at, "approvers are emailed when the request is created")
	assert.Equal(t, approvals.EmailAnswerInput{OrganizationID: "org_1", ApprovalID: "apr_1", QuestionID: "qst_1", AskerID: "mem_a"},
		h.emails[1].input, "the answer goes to whoever asked")
	assert.Equal(t, workflowtest.Start.Add(5*time.Minute), h.emails[1].at)
}

// A mail server that is down gets the delivery schedule (1, 4, 16 and 64
// minutes between five attempts) and holds nothing up.
func TestFailingEmailIsRetriedOnTheDeliveryScheduleAndBlocksNothing(t *testing.T) {
	h := newHarness(t)
	h.failEmails = errors.New("421 mail server busy")
	in := baseInput()
	in.ExpiresAt = workflowtest.Start.Add(90 * time.Minute) // after the last attempt, too soon for a reminder
	s := h.run(in)

	assert.Equal(t, states.Expired, s.Status, "a failed email does not fail the request")
	var offsets []time.Duration
	for i, e := range h.emails {
		assert.Equal(t, int32(i+1), e.attempt)
		offsets = append(offsets, e.at.Sub(workflowtest.Start))
	}
	assert.Equal(t, []time.Duration{0, time.Minute, 5 * time.Minute, 21 * time.Minute, 85 * time.Minute}, offsets)

	h = newHarness(t)
	h.failEmails = errors.New("421 mail server busy")
	h.Update(2*time.Minute, "decide", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	s = h.run(baseInput())
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, workflowtest.Start.Add(2*time.Minute), *s.DecidedAt, "the decision did not wait for the email")
	assert.Len(t, h.emails, 2, "attempts at 0 and 1 minute; the retry due at 5 minutes was cancelled by the decision")
}
