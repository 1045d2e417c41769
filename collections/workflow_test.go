package collections_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// collectionHarness runs the collection workflow in the test environment
// with recording persistence and email activities.
type collectionHarness struct {
	*workflowtest.Harness[collections.State]
	emails []sentEmail
}

type sentEmail struct {
	in collections.EmailRespondentsInput
	at time.Time
}

func newCollectionHarness(t *testing.T) *collectionHarness {
	h := &collectionHarness{Harness: workflowtest.New[collections.State](t, collections.Workflow, collections.ActivityPersist)}
	h.Env.RegisterActivityWithOptions(func(_ context.Context, in collections.EmailRespondentsInput) error {
		h.Mu.Lock()
		defer h.Mu.Unlock()
		h.emails = append(h.emails, sentEmail{in: in, at: h.Env.Now().UTC()})
		return nil
	}, activity.RegisterOptions{Name: collections.ActivityEmailRespondents})
	return h
}

func collectionInput(t *testing.T) collections.WorkflowInput {
	qs, err := questions.Define([]questions.Input{
		{ID: "budget", Prompt: "Budget", Kind: questions.Number},
		{ID: "vendor", Prompt: "Vendor", Kind: questions.Choice, Options: []string{"Acme", "Globex"}},
		{ID: "notes", Prompt: "Notes", Kind: questions.LongText, Required: new(bool)},
	})
	require.NoError(t, err)
	return collections.WorkflowInput{
		RequestInput:      workflows.RequestInput{OrganizationID: "org_1", Requester: "key_1", ExpiresAt: workflowtest.Start.Add(7 * 24 * time.Hour)},
		CollectionID:      "col_1",
		Questions:         qs,
		RespondentIDs:     []string{"mem_a", "mem_b", "mem_c"},
		RequiredResponses: 2,
	}
}

func reply(id string, answers string) collections.SubmitReplyRequest {
	return collections.SubmitReplyRequest{RespondentID: id, RespondentName: "Person " + id, Answers: workflowtest.Raw(answers)}
}

func (h *collectionHarness) run(in collections.WorkflowInput) collections.State {
	return h.RunAs(in.CollectionID, in)
}

func (h *collectionHarness) reminders() []sentEmail {
	var out []sentEmail
	for _, e := range h.emails {
		if e.in.Reminder {
			out = append(out, e)
		}
	}
	return out
}

func TestCollectionCompletesAtExactlyRequiredResponses(t *testing.T) {
	h := newCollectionHarness(t)
	h.Update(time.Minute, "stranger", collections.UpdateSubmitReply, reply("mem_x", `{"budget":1,"vendor":"Acme"}`))
	h.Update(2*time.Minute, "wrong-kind", collections.UpdateSubmitReply, reply("mem_a", `{"budget":"lots","vendor":"Acme"}`))
	h.Update(3*time.Minute, "missing", collections.UpdateSubmitReply, reply("mem_a", `{"budget":1}`))
	h.Update(4*time.Minute, "a", collections.UpdateSubmitReply, reply("mem_a", `{"budget":12345678901234567890,"vendor":"Acme","notes":null}`))
	h.Update(5*time.Minute, "a-again", collections.UpdateSubmitReply, reply("mem_a", `{"budget":2,"vendor":"Globex"}`))
	h.Update(6*time.Minute, "b", collections.UpdateSubmitReply, reply("mem_b", `{"budget":3,"vendor":"Globex","notes":"fine"}`))
	s := h.run(collectionInput(t))

	h.RefusedWith("stranger", apperr.NotARespondent)
	var field string
	require.NoError(t, h.RefusedWith("wrong-kind", apperr.InvalidAnswer).Details(&field))
	assert.Equal(t, "answers.budget", field)
	require.NoError(t, h.RefusedWith("missing", apperr.InvalidAnswer).Details(&field))
	assert.Equal(t, "answers.vendor", field)
	h.RefusedWith("a-again", apperr.AlreadySubmitted)
	assert.Equal(t, states.Open, h.Results["a"].State.Status, "one reply of two needed leaves it open")
	assert.Equal(t, 1, h.Results["a"].State.ResponsesSoFar)

	assert.Equal(t, states.Complete, s.Status)
	assert.Equal(t, 2, s.ResponsesSoFar)
	require.NotNil(t, s.SettledAt)
	assert.Equal(t, workflowtest.Start.Add(6*time.Minute), *s.SettledAt)
	require.Len(t, s.Replies, 2)
	assert.Equal(t, "12345678901234567890", string(s.Replies[0].Answers["budget"]), "numbers keep their exact text")
	assert.NotContains(t, s.Replies[0].Answers, "notes", "a null answer is no answer")
	assert.Equal(t, []string{"created", "replied", "replied"}, h.Actions())
	assert.Equal(t, "collection.requested", h.Transitions[0].Event)
	assert.Empty(t, h.Transitions[1].Event, "a reply is audited, not sent")
	assert.Equal(t, "collection.completed", h.Transitions[2].Event)
	for i, tr := range h.Transitions {
		assert.Equal(t, i+1, tr.Seq)
	}
	require.Len(t, h.emails, 1, "respondents are emailed once at creation; no due date, no reminder")
	assert.False(t, h.emails[0].in.Reminder)
}

func TestCollectionExpiresAtTheExactInstant(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.ExpiresAt = workflowtest.Start.Add(90 * time.Minute)
	h.Update(time.Minute, "a", collections.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"created", "replied", "expired"}, h.Actions())
	last := h.Transitions[2]
	assert.Equal(t, "collection.expired", last.Event)
	assert.Equal(t, in.ExpiresAt, last.At)
	assert.Len(t, s.Replies, 1, "replies submitted before expiry are kept")
}

func TestCollectionCancelledByRequesterOrAdministrator(t *testing.T) {
	h := newCollectionHarness(t)
	h.Update(time.Minute, "by-respondent", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_a"})
	h.Update(2*time.Minute, "by-admin", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_owner", ActorName: "Owner", Administrator: true})
	s := h.run(collectionInput(t))
	h.RefusedWith("by-respondent", apperr.Forbidden)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "cancelled"}, h.Actions())
	assert.Equal(t, workflows.CancelledForRequester, h.Transitions[1].Detail)
	assert.Empty(t, h.Transitions[1].Event, "cancelling sends no event")
}

func TestCollectionRemindsOnceThoseWhoHaveNotReplied(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.RequiredResponses = 3
	due := workflowtest.Start.Add(72 * time.Hour)
	in.DueAt = &due
	h.Update(time.Hour, "a", collections.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.Update(60*time.Hour, "b", collections.UpdateSubmitReply, reply("mem_b", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)

	assert.Equal(t, states.Expired, s.Status)
	reminders := h.reminders()
	require.Len(t, reminders, 1, "exactly one reminder")
	assert.Equal(t, workflowtest.Start.Add(48*time.Hour), reminders[0].at, "24 hours before dueAt")
	assert.Equal(t, []string{"mem_b", "mem_c"}, reminders[0].in.PersonIDs, "not to who already replied")
	assert.Equal(t, []string{"created", "replied", "reminded", "replied", "expired"}, h.Actions())
	require.NotNil(t, s.RemindedAt)
}

func TestCollectionSendsNoReminderOnceSettled(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	due := workflowtest.Start.Add(72 * time.Hour)
	in.DueAt = &due
	h.Update(time.Hour, "a", collections.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.Update(2*time.Hour, "b", collections.UpdateSubmitReply, reply("mem_b", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Complete, s.Status)
	assert.Empty(t, h.reminders())
	assert.Nil(t, s.RemindedAt)
}

func TestCollectionReminderAt(t *testing.T) {
	at := func(d time.Duration) *time.Time { v := workflowtest.Start.Add(d); return &v }
	expires := workflowtest.Start.Add(30 * 24 * time.Hour)
	cases := []struct {
		name string
		due  *time.Time
		exp  time.Time
		want time.Duration
		ok   bool
	}{
		{"no due date", nil, expires, 0, false},
		{"a day before a far due date", at(10 * 24 * time.Hour), expires, 9 * 24 * time.Hour, true},
		{"halfway to a near due date", at(12 * time.Hour), expires, 6 * time.Hour, true},
		{"at 48 hours both agree", at(48 * time.Hour), expires, 24 * time.Hour, true},
		{"none at or after expiry", at(10 * 24 * time.Hour), workflowtest.Start.Add(9 * 24 * time.Hour), 0, false},
		{"due in the past", at(-time.Hour), expires, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := collections.ReminderAt(workflowtest.Start, c.due, c.exp)
			assert.Equal(t, c.ok, ok)
			if c.ok {
				assert.Equal(t, workflowtest.Start.Add(c.want), got)
			}
		})
	}
}

func TestRemovingARespondentLowersWhatCompletesIt(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t) // mem_a, mem_b, mem_c; two replies complete it
	in.RequiredResponses = 3
	remove := func(id string) workflows.RemoveAskedRequest {
		return workflows.RemoveAskedRequest{PersonID: id, PersonName: "Guest " + id, ActorID: "key_admin", ActorName: "admin"}
	}
	h.Update(time.Minute, "a", collections.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.Update(2*time.Minute, "remove-replied", collections.UpdateRemoveRespondent, remove("mem_a"))
	h.Update(3*time.Minute, "remove-stranger", collections.UpdateRemoveRespondent, remove("mem_x"))
	h.Update(4*time.Minute, "b", collections.UpdateSubmitReply, reply("mem_b", `{"budget":2,"vendor":"Acme"}`))
	h.Update(5*time.Minute, "remove-c", collections.UpdateRemoveRespondent, remove("mem_c"))
	s := h.run(in)

	h.RefusedWith("remove-replied", apperr.AlreadySubmitted)
	h.RefusedWith("remove-stranger", apperr.NotARespondent)
	assert.Equal(t, states.Complete, s.Status, "two of the two people left replied")
	assert.Equal(t, 2, s.RequiredResponses)
	assert.Equal(t, []string{"mem_a", "mem_b"}, s.RespondentIDs)
	assert.Equal(t, []string{"created", "replied", "replied", "respondent_removed"}, h.Actions())
	last := h.Transitions[3]
	assert.Equal(t, "collection.completed", last.Event)
	assert.Contains(t, last.Detail, "removed Guest mem_c from the respondents; complete")
}

func TestRemovingTheLastRespondentCancels(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.RespondentIDs, in.RequiredResponses = []string{"gst_1"}, 1
	h.Update(time.Minute, "remove", collections.UpdateRemoveRespondent,
		workflows.RemoveAskedRequest{PersonID: "gst_1", PersonName: "Gus", ActorID: "key_admin", ActorName: "admin"})
	h.Update(2*time.Minute, "reply-after", collections.UpdateSubmitReply, reply("gst_1", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Contains(t, h.Transitions[1].Detail, "nobody is left to reply")
	assert.Empty(t, h.Transitions[1].Event)
	assert.Empty(t, s.RespondentIDs)
}

// TestDelegateJoinsAWaitingCollection: the delegate is asked and emailed;
// their reply is on Ann's behalf, and Ann's own is then refused.
func TestDelegateJoinsAWaitingCollection(t *testing.T) {
	h := newCollectionHarness(t)
	h.Update(time.Minute, "delegate", workflows.UpdateAddDelegate, workflowtest.AnnAway)
	h.Update(2*time.Minute, "dee", collections.UpdateSubmitReply, reply("mem_d", `{"budget":1,"vendor":"Acme"}`))
	h.Update(3*time.Minute, "ann", collections.UpdateSubmitReply, reply("mem_a", `{"budget":2,"vendor":"Acme"}`))
	h.Update(4*time.Minute, "bob", collections.UpdateSubmitReply, reply("mem_b", `{"budget":3,"vendor":"Globex"}`))
	s := h.run(collectionInput(t))

	require.NoError(t, h.Results["delegate"].Err)
	h.RefusedWith("ann", apperr.AlreadySubmitted)
	assert.Equal(t, states.Complete, s.Status)
	assert.Equal(t, []string{"mem_a", "mem_b", "mem_c", "mem_d"}, s.RespondentIDs)
	require.Len(t, s.Replies, 2)
	assert.Equal(t, &workflows.Delegator{ID: "mem_a", Name: "Ann"}, s.Replies[0].OnBehalfOf)
	assert.Nil(t, s.Replies[1].OnBehalfOf)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionDelegated, collections.ActionReplied, collections.ActionReplied}, h.Actions())
	assert.Equal(t, "on behalf of Ann", h.Transitions[2].Detail)
	assert.Len(t, h.emails, 2, "at creation, and the delegate")
}

func TestCollectionUpdatesForAnotherRequestAreRefused(t *testing.T) {
	h := newCollectionHarness(t)
	h.RefusesOtherRequests(collections.UpdateRemoveRespondent, func(target workflows.Target) map[string]workflowtest.Sent {
		r := reply("mem_a", `{"budget":1,"vendor":"Acme"}`)
		r.Target = target
		return map[string]workflowtest.Sent{"reply": {Name: collections.UpdateSubmitReply, Arg: r}}
	})
	s := h.run(collectionInput(t))
	assert.Equal(t, states.Expired, s.Status)
	assert.Empty(t, s.Replies)
	assert.Len(t, s.RespondentIDs, 3)
}

func TestCreatedWriteEmailsTheRespondents(t *testing.T) {
	for _, reached := range []bool{true, false} {
		t.Run(fmt.Sprintf("reached everyone=%v", reached), func(t *testing.T) {
			h := newCollectionHarness(t)
			h.EmailedOnPersist = reached
			h.Update(time.Minute, "cancel", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "key_1"})
			h.run(collectionInput(t))

			require.NotEmpty(t, h.Transitions)
			assert.True(t, h.Transitions[0].AskByEmail, "the created write emails the respondents")
			for _, tr := range h.Transitions[1:] {
				assert.False(t, tr.AskByEmail, "only the created write emails")
			}
			if reached {
				assert.Empty(t, h.emails, "no email activity once the write reached everyone")
			} else {
				assert.Len(t, h.emails, 1, "the email activity sends what the write did not")
			}
		})
	}
}
