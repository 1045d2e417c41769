package workflows_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// collectionHarness runs the collection workflow in the test environment
// with recording persistence and email activities.
type collectionHarness struct {
	*kindHarness[workflows.CollectionState]
	emails []sentEmail
}

type sentEmail struct {
	in workflows.EmailRespondentsInput
	at time.Time
}

func newCollectionHarness(t *testing.T) *collectionHarness {
	h := &collectionHarness{kindHarness: newKindHarness[workflows.CollectionState](t, workflows.Collection, workflows.ActivityPersistCollection)}
	h.env.RegisterActivityWithOptions(func(_ context.Context, in workflows.EmailRespondentsInput) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.emails = append(h.emails, sentEmail{in: in, at: h.env.Now().UTC()})
		return nil
	}, activity.RegisterOptions{Name: workflows.ActivityEmailRespondents})
	return h
}

func collectionInput(t *testing.T) workflows.CollectionInput {
	qs, err := questions.Define([]questions.Input{
		{ID: "budget", Prompt: "Budget", Kind: questions.Number},
		{ID: "vendor", Prompt: "Vendor", Kind: questions.Choice, Options: []string{"Acme", "Globex"}},
		{ID: "notes", Prompt: "Notes", Kind: questions.LongText, Required: new(bool)},
	})
	require.NoError(t, err)
	return workflows.CollectionInput{
		CollectionID: "col_1", OrganizationID: "org_1", Questions: qs,
		RespondentIDs: []string{"mem_a", "mem_b", "mem_c"}, RequiredResponses: 2,
		Requester: "key_1", ExpiresAt: start.Add(7 * 24 * time.Hour),
	}
}

func reply(id string, answers string) workflows.SubmitReplyRequest {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(answers), &m); err != nil {
		panic(err)
	}
	return workflows.SubmitReplyRequest{RespondentID: id, RespondentName: "Person " + id, Answers: m}
}

func (h *collectionHarness) run(in workflows.CollectionInput) workflows.CollectionState {
	return h.runAs(in.CollectionID, in)
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
	h.update(time.Minute, "stranger", workflows.UpdateSubmitReply, reply("mem_x", `{"budget":1,"vendor":"Acme"}`))
	h.update(2*time.Minute, "wrong-kind", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":"lots","vendor":"Acme"}`))
	h.update(3*time.Minute, "missing", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":1}`))
	h.update(4*time.Minute, "a", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":12345678901234567890,"vendor":"Acme","notes":null}`))
	h.update(5*time.Minute, "a-again", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":2,"vendor":"Globex"}`))
	h.update(6*time.Minute, "b", workflows.UpdateSubmitReply, reply("mem_b", `{"budget":3,"vendor":"Globex","notes":"fine"}`))
	s := h.run(collectionInput(t))

	h.refusedWith("stranger", apperr.NotARespondent)
	var field string
	require.NoError(t, h.refusedWith("wrong-kind", apperr.InvalidAnswer).Details(&field))
	assert.Equal(t, "answers.budget", field)
	require.NoError(t, h.refusedWith("missing", apperr.InvalidAnswer).Details(&field))
	assert.Equal(t, "answers.vendor", field)
	h.refusedWith("a-again", apperr.AlreadySubmitted)
	assert.Equal(t, states.Open, h.results["a"].state.Status, "one reply of two needed leaves it open")
	assert.Equal(t, 1, h.results["a"].state.ResponsesSoFar)

	assert.Equal(t, states.Complete, s.Status)
	assert.Equal(t, 2, s.ResponsesSoFar)
	require.NotNil(t, s.SettledAt)
	assert.Equal(t, start.Add(6*time.Minute), *s.SettledAt)
	require.Len(t, s.Replies, 2)
	assert.Equal(t, "12345678901234567890", string(s.Replies[0].Answers["budget"]), "numbers keep their exact text")
	assert.NotContains(t, s.Replies[0].Answers, "notes", "a null answer is no answer")
	assert.Equal(t, []string{"created", "replied", "replied"}, h.actions())
	assert.Equal(t, "collection.requested", h.transitions[0].Event)
	assert.Empty(t, h.transitions[1].Event, "a reply is audited, not sent")
	assert.Equal(t, "collection.completed", h.transitions[2].Event)
	for i, tr := range h.transitions {
		assert.Equal(t, i+1, tr.Seq)
	}
	require.Len(t, h.emails, 1, "respondents are emailed once at creation; no due date, no reminder")
	assert.False(t, h.emails[0].in.Reminder)
}

func TestCollectionExpiresAtTheExactInstant(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.ExpiresAt = start.Add(90 * time.Minute)
	h.update(time.Minute, "a", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{"created", "replied", "expired"}, h.actions())
	last := h.transitions[2]
	assert.Equal(t, "collection.expired", last.Event)
	assert.Equal(t, in.ExpiresAt, last.At)
	assert.Len(t, s.Replies, 1, "replies submitted before expiry are kept")
}

func TestCollectionCancelledByRequesterOrAdministrator(t *testing.T) {
	h := newCollectionHarness(t)
	h.update(time.Minute, "by-respondent", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_a"})
	h.update(2*time.Minute, "by-admin", workflows.UpdateCancel, workflows.CancelRequest{ActorID: "mem_owner", ActorName: "Owner", Administrator: true})
	s := h.run(collectionInput(t))
	h.refusedWith("by-respondent", apperr.Forbidden)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Equal(t, []string{"created", "cancelled"}, h.actions())
	assert.Equal(t, workflows.CancelledForRequester, h.transitions[1].Detail)
	assert.Empty(t, h.transitions[1].Event, "cancelling sends no event")
}

func TestCollectionRemindsOnceThoseWhoHaveNotReplied(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.RequiredResponses = 3
	due := start.Add(72 * time.Hour)
	in.DueAt = &due
	h.update(time.Hour, "a", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.update(60*time.Hour, "b", workflows.UpdateSubmitReply, reply("mem_b", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)

	assert.Equal(t, states.Expired, s.Status)
	reminders := h.reminders()
	require.Len(t, reminders, 1, "exactly one reminder")
	assert.Equal(t, start.Add(48*time.Hour), reminders[0].at, "24 hours before dueAt")
	assert.Equal(t, []string{"mem_b", "mem_c"}, reminders[0].in.PersonIDs, "not to who already replied")
	assert.Equal(t, []string{"created", "replied", "reminded", "replied", "expired"}, h.actions())
	require.NotNil(t, s.RemindedAt)
}

func TestCollectionSendsNoReminderOnceSettled(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	due := start.Add(72 * time.Hour)
	in.DueAt = &due
	h.update(time.Hour, "a", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.update(2*time.Hour, "b", workflows.UpdateSubmitReply, reply("mem_b", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Complete, s.Status)
	assert.Empty(t, h.reminders())
	assert.Nil(t, s.RemindedAt)
}

func TestCollectionReminderAt(t *testing.T) {
	at := func(d time.Duration) *time.Time { v := start.Add(d); return &v }
	expires := start.Add(30 * 24 * time.Hour)
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
		{"none at or after expiry", at(10 * 24 * time.Hour), start.Add(9 * 24 * time.Hour), 0, false},
		{"due in the past", at(-time.Hour), expires, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := workflows.CollectionReminderAt(start, c.due, c.exp)
			assert.Equal(t, c.ok, ok)
			if c.ok {
				assert.Equal(t, start.Add(c.want), got)
			}
		})
	}
}

func TestRemovingARespondentLowersWhatCompletesIt(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t) // mem_a, mem_b, mem_c; two replies complete it
	in.RequiredResponses = 3
	remove := func(id string) workflows.RemoveRespondentRequest {
		return workflows.RemoveRespondentRequest{PersonID: id, PersonName: "Guest " + id, ActorID: "key_admin", ActorName: "admin"}
	}
	h.update(time.Minute, "a", workflows.UpdateSubmitReply, reply("mem_a", `{"budget":1,"vendor":"Acme"}`))
	h.update(2*time.Minute, "remove-replied", workflows.UpdateRemoveRespondent, remove("mem_a"))
	h.update(3*time.Minute, "remove-stranger", workflows.UpdateRemoveRespondent, remove("mem_x"))
	h.update(4*time.Minute, "b", workflows.UpdateSubmitReply, reply("mem_b", `{"budget":2,"vendor":"Acme"}`))
	h.update(5*time.Minute, "remove-c", workflows.UpdateRemoveRespondent, remove("mem_c"))
	s := h.run(in)

	h.refusedWith("remove-replied", apperr.AlreadySubmitted)
	h.refusedWith("remove-stranger", apperr.NotARespondent)
	assert.Equal(t, states.Complete, s.Status, "two of the two people left replied")
	assert.Equal(t, 2, s.RequiredResponses)
	assert.Equal(t, []string{"mem_a", "mem_b"}, s.RespondentIDs)
	assert.Equal(t, []string{"created", "replied", "replied", "respondent_removed"}, h.actions())
	last := h.transitions[3]
	assert.Equal(t, "collection.completed", last.Event)
	assert.Contains(t, last.Detail, "removed Guest mem_c from the respondents; complete")
}

func TestRemovingTheLastRespondentCancels(t *testing.T) {
	h := newCollectionHarness(t)
	in := collectionInput(t)
	in.RespondentIDs, in.RequiredResponses = []string{"gst_1"}, 1
	h.update(time.Minute, "remove", workflows.UpdateRemoveRespondent,
		workflows.RemoveRespondentRequest{PersonID: "gst_1", PersonName: "Gus", ActorID: "key_admin", ActorName: "admin"})
	h.update(2*time.Minute, "reply-after", workflows.UpdateSubmitReply, reply("gst_1", `{"budget":1,"vendor":"Acme"}`))
	s := h.run(in)
	assert.Equal(t, states.Cancelled, s.Status)
	assert.Contains(t, h.transitions[1].Detail, "nobody is left to reply")
	assert.Empty(t, h.transitions[1].Event)
	assert.Empty(t, s.RespondentIDs)
}
