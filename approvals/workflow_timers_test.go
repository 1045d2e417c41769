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

// reminders are the reminder emails the harness saw.
func (h *harness) reminders() []email {
	var out []email
	for _, e := range h.emails {
		if in, ok := e.input.(approvals.EmailApproversInput); ok && in.Reminder {
			out = append(out, e)
		}
	}
	return out
}

// TestApprovalReminderGoesOnceHalfwayToWhoHasNotDecided: with two
// approvals needed, Ann approves; halfway to the expiry only Ben (not Ann,
// not the requester) is reminded, once, and the request then expires.
func TestApprovalReminderGoesOnceHalfwayToWhoHasNotDecided(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.RequiredApprovals = 2
	in.ApproverIDs = []string{"mem_a", "mem_b", "mem_req"}
	h.Update(time.Hour, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	s := h.run(in)

	assert.Equal(t, states.Expired, s.Status)
	require.Len(t, h.reminders(), 1, "exactly one reminder")
	r := h.reminders()[0]
	assert.Equal(t, workflowtest.Start.Add(12*time.Hour), r.at, "halfway between creation and expiresAt")
	assert.Equal(t, approvals.EmailApproversInput{OrganizationID: "org_1", ApprovalID: "apr_1", Reminder: true,
		PersonIDs: []string{"mem_b"}}, r.input)
	assert.Equal(t, []string{"created", "approved", workflows.ActionReminded, "expired"}, h.Actions())
	assert.Equal(t, "reminded 1 approvers who had not decided", h.Transitions[2].Detail)
	assert.Empty(t, h.Transitions[2].Event, "the timeline only")
	assert.Equal(t, workflowtest.Start.Add(12*time.Hour), *s.RemindedAt)
}

// TestNoApprovalReminderAfterSettling: a request decided before halfway
// gets no reminder.
func TestNoApprovalReminderAfterSettling(t *testing.T) {
	h := newHarness(t)
	h.Update(11*time.Hour, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "reject"})
	s := h.run(baseInput())
	assert.Equal(t, states.Rejected, s.Status)
	assert.Empty(t, h.reminders())
	assert.Nil(t, s.RemindedAt)
	assert.Equal(t, []string{"created", "rejected"}, h.Actions())
}

// TestNoApprovalReminderWhenHalfwayIsUnderAnHour: an expiry under two
// hours away leaves no room for a reminder; at two hours it is due at one.
func TestNoApprovalReminderWhenHalfwayIsUnderAnHour(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ExpiresAt = workflowtest.Start.Add(2*time.Hour - time.Second)
	h.run(in)
	assert.Empty(t, h.reminders())
	assert.Equal(t, []string{"created", "expired"}, h.Actions())

	h = newHarness(t)
	in.ExpiresAt = workflowtest.Start.Add(2 * time.Hour)
	h.run(in)
	require.Len(t, h.reminders(), 1)
	assert.Equal(t, workflowtest.Start.Add(time.Hour), h.reminders()[0].at)

	at, ok := approvals.ReminderAt(workflowtest.Start, workflowtest.Start.Add(2*time.Hour-time.Second))
	assert.False(t, ok)
	assert.Equal(t, workflowtest.Start.Add(time.Hour-time.Second/2), at)
}

// TestEscalationAddsApproversAtExactlyAfter: still pending after four
// hours, the escalation's people join the approvers (one already was),
// are emailed, the event fires, and a new approver can then decide.
func TestEscalationAddsApproversAtExactlyAfter(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.Escalation = &approvals.ScheduledEscalation{At: workflowtest.Start.Add(4 * time.Hour), ApproverIDs: []string{"mem_boss", "mem_a"}}
	h.Update(4*time.Hour-time.Minute, "boss-early", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_boss", Decision: "approve"})
	h.Update(5*time.Hour, "boss", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_boss", ActorName: "Bo", Decision: "approve"})
	s := h.run(in)

	h.RefusedWith("boss-early", apperr.NotAnApprover)
	assert.Equal(t, states.Approved, s.Status)
	assert.Equal(t, "mem_boss", s.DecidedByID)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_boss"}, s.ApproverIDs)
	assert.Equal(t, []string{"created", workflows.ActionEscalated, "approved"}, h.Actions())
	esc := h.Transitions[1]
	assert.Equal(t, workflowtest.Start.Add(4*time.Hour), esc.At, "escalated exactly at after")
	assert.Equal(t, "approval.escalated", esc.Event)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_boss"}, esc.State.ApproverIDs, "the event's data names the new approvers")
	assert.Equal(t, workflowtest.Start.Add(4*time.Hour), *esc.State.EscalatedAt)
	assert.Equal(t, "still pending, so it was escalated: 1 more approvers asked", esc.Detail)
	require.Len(t, h.emails, 2)
	assert.Equal(t, approvals.EmailApproversInput{OrganizationID: "org_1", ApprovalID: "apr_1"}, h.emails[1].input,
		"the new approvers are emailed by the email at creation, which skips who was emailed")
	assert.Equal(t, workflowtest.Start.Add(4*time.Hour), h.emails[1].at)
}

// TestNoEscalationOnceSettled: a request decided before `after` is not
// escalated, and nobody else is emailed.
func TestNoEscalationOnceSettled(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.Escalation = &approvals.ScheduledEscalation{At: workflowtest.Start.Add(4 * time.Hour), ApproverIDs: []string{"mem_boss"}}
	h.Update(3*time.Hour, "a", approvals.UpdateDecide, approvals.DecideRequest{ActorID: "mem_a", Decision: "approve"})
	s := h.run(in)
	assert.Equal(t, states.Approved, s.Status)
	assert.Nil(t, s.EscalatedAt)
	assert.Equal(t, []string{"created", "approved"}, h.Actions())
	assert.Len(t, h.emails, 1)
}

// TestEscalationAndReminderInTimeOrder: an escalation after the halfway
// point comes after the reminder; the reminder went only to the first
// approvers, and each timer fires once before the expiry.
func TestEscalationAndReminderInTimeOrder(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.Escalation = &approvals.ScheduledEscalation{At: workflowtest.Start.Add(20 * time.Hour), ApproverIDs: []string{"mem_boss"}}
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"created", workflows.ActionReminded, workflows.ActionEscalated, "expired"}, h.Actions())
	assert.Equal(t, []string{"mem_a", "mem_b"}, h.reminders()[0].input.(approvals.EmailApproversInput).PersonIDs)
	assert.Len(t, h.emails, 3, "at creation, the reminder, the escalation")
}
