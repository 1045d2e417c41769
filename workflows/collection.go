package workflows

import (
	"maps"
	"slices"
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
)

// Audit actions a collection transition records, beside the shared
// ActionCreated, ActionExpired and ActionCancelled.
const (
	ActionReplied  = "replied"
	ActionReminded = "reminded"
	// ActionRespondentRemoved is a person taken off the respondents.
	ActionRespondentRemoved = "respondent_removed"
)

// Collection is the workflow of one request for information: it waits for
// submitted replies and cancellation (Updates), the reminder and expiry
// (timers).
func Collection(ctx workflow.Context, in CollectionInput) (CollectionState, error) {
	c := &collection{in: in}
	c.request = newRequest(ctx, c, in.CollectionID, in.OrganizationID, in.Requester, ActivityPersistCollection, CollectionState{
		Status: states.Open, Replies: []Reply{}, RespondentIDs: slices.Clone(in.RespondentIDs), RequiredResponses: in.RequiredResponses,
		OnBehalfOf: maps.Clone(in.OnBehalfOf)})
	c.emails = true
	if c.state.RequiredResponses < 1 {
		c.state.RequiredResponses = len(c.state.RespondentIDs)
	}
	if err := setUpdates(ctx, append(c.askingUpdates(),
		update{UpdateSubmitReply, c.submitReply, validator(c.in.CollectionID, func(r SubmitReplyRequest) error { return checkReply(&c.in, &c.state, r) })},
		update{UpdateRemoveRespondent, c.removeRespondent, validator(c.in.CollectionID, c.state.checkRemoveRespondent)},
	)); err != nil {
		return c.state, err
	}
	return c.run(ctx)
}

type collection struct {
	request[CollectionState]
	in CollectionInput
}

func (c *collection) open() bool { return c.state.Status == states.Open }

func (c *collection) run(ctx workflow.Context) (CollectionState, error) {
	createdAt := workflow.Now(ctx)
	if err := c.persist(ctx, CollectionTransition{Action: ActionCreated, Event: events.CollectionRequested}); err != nil {
		return c.state, err
	}
	c.startEmails(ctx)
	c.emailAsked(ctx)
	c.created = true
	if at, ok := CollectionReminderAt(createdAt, c.in.DueAt, c.in.ExpiresAt); ok {
		if err := c.await(ctx, c.open, []timer{{at, c.remind}}); err != nil {
			return c.state, err
		}
	}
	if err := c.expire(ctx, c.in.ExpiresAt, c.open, func() CollectionTransition {
		c.settle(ctx, states.Expired)
		return CollectionTransition{Action: ActionExpired, Event: events.CollectionExpired}
	}); err != nil {
		return c.state, err
	}
	return c.state, c.finish(ctx)
}

// remind emails the respondents who have not submitted, once.
func (c *collection) remind(ctx workflow.Context) error {
	var waiting []string
	err := c.transition(ctx, func() (CollectionTransition, error) {
		if !c.open() {
			return CollectionTransition{}, nil
		}
		for _, id := range c.state.RespondentIDs {
			if !c.state.submitted(id) {
				waiting = append(waiting, id)
			}
		}
		now := workflow.Now(ctx).UTC()
		c.state.RemindedAt = &now
		return CollectionTransition{Action: ActionReminded, Detail: "reminded " + strconv.Itoa(len(waiting)) + " respondents who had not replied"}, nil
	})
	if err == nil && len(waiting) > 0 {
		c.email(ctx, ActivityEmailRespondents, EmailRespondentsInput{OrganizationID: c.in.OrganizationID, CollectionID: c.in.CollectionID,
			Reminder: true, PersonIDs: waiting})
	}
	return err
}

func (c *collection) settle(ctx workflow.Context, status string) {
	now := workflow.Now(ctx).UTC()
	c.state.Status, c.state.SettledAt = status, &now
}

func (c *collection) checkOpen() error { return c.state.checkOpen() }
func (c *collection) asking() (*[]string, *map[string]Delegator) {
	return &c.state.RespondentIDs, &c.state.OnBehalfOf
}
func (c *collection) acted() []string  { return c.state.respondents() }
func (c *collection) notAsked() string { return apperr.NotARespondent }
func (c *collection) emailAsked(ctx workflow.Context) {
	c.email(ctx, ActivityEmailRespondents, EmailRespondentsInput{OrganizationID: c.in.OrganizationID, CollectionID: c.in.CollectionID})
}

func (c *collection) submitReply(ctx workflow.Context, req SubmitReplyRequest) (CollectionState, error) {
	err := c.transition(ctx, func() (CollectionTransition, error) {
		// Checked again under the lock: two replies from one person can
		// both pass validation before either runs.
		if err := checkReply(&c.in, &c.state, req); err != nil {
			return CollectionTransition{}, err
		}
		answers, _ := checkAnswers(c.in.Questions, req.Answers)
		away := standsInFor(c.state.OnBehalfOf, req.RespondentID)
		c.state.Replies = append(c.state.Replies, Reply{RespondentID: req.RespondentID, RespondentName: req.RespondentName,
			RespondentEmail: req.RespondentEmail, SubmittedAt: workflow.Now(ctx).UTC(), Answers: answers, OnBehalfOf: away})
		c.state.ResponsesSoFar = len(c.state.Replies)
		t := CollectionTransition{Action: ActionReplied, ActorID: req.RespondentID, ActorName: req.RespondentName, Detail: onBehalf(away)}
		if c.state.ResponsesSoFar >= c.state.RequiredResponses {
			// The reply that completes the request is audited as a reply;
			// its event says the request is complete.
			c.settle(ctx, states.Complete)
			t.Event = events.CollectionCompleted
			t.Detail = joinDetail(t.Detail, c.state.completeDetail())
		}
		return t, nil
	})
	return c.state, err
}

// removeRespondent takes a person removed from the organisation off an
// open collection. A reply they submitted stays. requiredResponses is
// lowered to the people left, so the request can still complete: it does
// at once when the replies already reach it, and with nobody left it is
// cancelled. The Update adds commands only to histories that receive it.
func (c *collection) removeRespondent(ctx workflow.Context, req RemoveRespondentRequest) (CollectionState, error) {
	err := c.transition(ctx, func() (CollectionTransition, error) {
		if err := c.state.checkRemoveRespondent(req); err != nil {
			return CollectionTransition{}, err
		}
		c.state.RespondentIDs = slices.DeleteFunc(slices.Clone(c.state.RespondentIDs), func(id string) bool { return id == req.PersonID })
		t := CollectionTransition{Action: ActionRespondentRemoved, ActorID: req.ActorID, ActorName: req.ActorName,
			Detail: "removed " + req.PersonName + " from the respondents"}
		c.state.RequiredResponses = min(c.state.RequiredResponses, len(c.state.RespondentIDs))
		switch {
		case c.state.RequiredResponses == 0:
			c.settle(ctx, states.Cancelled)
			t.Detail += "; nobody is left to reply, so the request was cancelled"
		case c.state.ResponsesSoFar >= c.state.RequiredResponses:
			c.settle(ctx, states.Complete)
			t.Event = events.CollectionCompleted
			t.Detail += "; " + c.state.completeDetail()
		}
		return t, nil
	})
	return c.state, err
}

func (s *CollectionState) completeDetail() string {
	return "complete: " + strconv.Itoa(s.ResponsesSoFar) + " of " + strconv.Itoa(len(s.RespondentIDs)) + " respondents replied"
}

// respondents are who submitted a reply, in order.
func (s *CollectionState) respondents() []string {
	out := make([]string, len(s.Replies))
	for i, r := range s.Replies {
		out[i] = r.RespondentID
	}
	return out
}

func (s *CollectionState) submitted(personID string) bool {
	return slices.ContainsFunc(s.Replies, func(r Reply) bool { return r.RespondentID == personID })
}
