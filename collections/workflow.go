package collections

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// Audit actions a collection transition records, beside the shared ones
// (workflows.ActionCreated, …).
const (
	ActionReplied = "replied"
	// ActionRespondentRemoved is a person taken off the respondents.
	ActionRespondentRemoved = "respondent_removed"
)

// Workflow is the workflow of one request for information: it waits for
// submitted replies and cancellation (Updates), the reminder and expiry
// (timers).
func Workflow(ctx workflow.Context, in WorkflowInput) (State, error) {
	c := &collection{in: in}
	c.Request = workflows.NewRequest(ctx, c, in.CollectionID, in.OrganizationID, in.Requester, ActivityPersist, State{
		Status: states.Open, Replies: []Reply{}, RespondentIDs: slices.Clone(in.RespondentIDs), RequiredResponses: in.RequiredResponses,
		OnBehalfOf: maps.Clone(in.OnBehalfOf)})
	if c.State.RequiredResponses < 1 {
		c.State.RequiredResponses = len(c.State.RespondentIDs)
	}
	if err := workflows.SetUpdates(ctx, c.Updates(
		workflows.Update{Name: UpdateSubmitReply, Handler: c.submitReply, Validator: workflows.Validator(c.in.CollectionID, c.checkReply)},
	)); err != nil {
		return c.State, err
	}
	return c.run(ctx)
}

type collection struct {
	workflows.Request[State]
	in WorkflowInput
}

func (c *collection) run(ctx workflow.Context) (State, error) {
	createdAt := workflow.Now(ctx)
	if err := c.Begin(ctx, Transition{Action: workflows.ActionCreated, Event: events.CollectionRequested}); err != nil {
		return c.State, err
	}
	var timers []workflows.Timer
	if at, ok := ReminderAt(createdAt, c.in.DueAt, c.in.ExpiresAt); ok {
		timers = append(timers, workflows.Timer{At: at, Fire: c.remind})
	}
	return c.Wait(ctx, c.in.ExpiresAt, timers, Transition{Action: workflows.ActionExpired, Event: events.CollectionExpired})
}

// remind emails the respondents who have not submitted, once.
func (c *collection) remind(ctx workflow.Context) error {
	return c.Remind(ctx, &c.State.RemindedAt, func() []string {
		var waiting []string
		for _, id := range c.State.RespondentIDs {
			if !c.State.submitted(id) {
				waiting = append(waiting, id)
			}
		}
		return waiting
	}, "respondents who had not replied", ActivityEmailRespondents, func(ids []string) any {
		return EmailRespondentsInput{OrganizationID: c.in.OrganizationID, CollectionID: c.in.CollectionID, Reminder: true, PersonIDs: ids}
	})
}

func (c *collection) Settle(ctx workflow.Context, status string) {
	now := workflow.Now(ctx).UTC()
	c.State.Status, c.State.SettledAt = status, &now
}

func (c *collection) CheckOpen() error { return c.State.checkOpen() }
func (c *collection) Asking() (*[]string, *map[string]workflows.Delegator) {
	return &c.State.RespondentIDs, &c.State.OnBehalfOf
}
func (c *collection) Acted() []string  { return c.State.respondents() }
func (c *collection) NotAsked() string { return apperr.NotARespondent }
func (c *collection) Removal() workflows.Removal {
	return workflows.Removal{Update: UpdateRemoveRespondent, Action: ActionRespondentRemoved, Asked: "respondents"}
}

// CheckRemove leaves on a request whoever replied: the reply stands, and
// counts.
func (c *collection) CheckRemove(personID string) error {
	if c.State.submitted(personID) {
		return workflows.Refuse(apperr.AlreadySubmitted, "%s has already replied", personID)
	}
	return nil
}

// Removed lowers requiredResponses to the people left, so the request can
// still complete: it does at once when the replies already reach it, and
// with nobody left it is cancelled.
func (c *collection) Removed(ctx workflow.Context, _ workflows.RemoveAskedRequest, t *Transition) bool {
	c.State.RequiredResponses = min(c.State.RequiredResponses, len(c.State.RespondentIDs))
	switch {
	case c.State.RequiredResponses == 0:
		c.Settle(ctx, states.Cancelled)
		t.Detail += "; nobody is left to reply, so the request was cancelled"
	case c.State.ResponsesSoFar >= c.State.RequiredResponses:
		c.Settle(ctx, states.Complete)
		t.Event = events.CollectionCompleted
		t.Detail += "; " + c.State.completeDetail()
	}
	return false
}
func (c *collection) EmailAsked(ctx workflow.Context) {
	c.Email(ctx, ActivityEmailRespondents, EmailRespondentsInput{OrganizationID: c.in.OrganizationID, CollectionID: c.in.CollectionID})
}

func (c *collection) submitReply(ctx workflow.Context, req SubmitReplyRequest) (State, error) {
	err := c.Apply(ctx, func() (Transition, error) {
		// Checked again under the lock: two replies from one person can
		// both pass validation before either runs.
		if err := c.checkReply(req); err != nil {
			return Transition{}, err
		}
		answers, _ := checkAnswers(c.in.Questions, req.Answers)
		away := workflows.StandsInFor(c.State.OnBehalfOf, req.RespondentID)
		c.State.Replies = append(c.State.Replies, Reply{RespondentID: req.RespondentID, RespondentName: req.RespondentName,
			RespondentEmail: req.RespondentEmail, SubmittedAt: workflow.Now(ctx).UTC(), Answers: answers, OnBehalfOf: away})
		c.State.ResponsesSoFar = len(c.State.Replies)
		t := Transition{Action: ActionReplied, ActorID: req.RespondentID, ActorName: req.RespondentName, Detail: workflows.OnBehalf(away)}
		if c.State.ResponsesSoFar >= c.State.RequiredResponses {
			// The reply that completes the request is audited as a reply;
			// its event says the request is complete.
			c.Settle(ctx, states.Complete)
			t.Event = events.CollectionCompleted
			t.Detail = workflows.JoinDetail(t.Detail, c.State.completeDetail())
		}
		return t, nil
	})
	return c.State, err
}

func (s *State) completeDetail() string {
	return "complete: " + strconv.Itoa(s.ResponsesSoFar) + " of " + strconv.Itoa(len(s.RespondentIDs)) + " respondents replied"
}

// respondents are who submitted a reply, in order.
func (s *State) respondents() []string {
	out := make([]string, len(s.Replies))
	for i, r := range s.Replies {
		out[i] = r.RespondentID
	}
	return out
}

func (s *State) submitted(personID string) bool {
	return slices.ContainsFunc(s.Replies, func(r Reply) bool { return r.RespondentID == personID })
}

// reminderLead is how long before a collection's dueAt its reminder goes
// out.
const reminderLead = 24 * time.Hour

// ReminderAt is when a collection's one reminder goes out: 24
// hours before dueAt, or halfway between creation and dueAt when dueAt is
// less than 48 hours away (so a reminder never comes right after the
// request). There is none without dueAt, or when it would come at or after
// the expiry.
func ReminderAt(createdAt time.Time, dueAt *time.Time, expiresAt time.Time) (time.Time, bool) {
	if dueAt == nil || !dueAt.After(createdAt) {
		return time.Time{}, false
	}
	at := dueAt.Add(-reminderLead)
	if half := workflows.Halfway(createdAt, *dueAt); half.After(at) {
		at = half
	}
	return at, at.Before(expiresAt)
}
