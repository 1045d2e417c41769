package workflows

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
)

// Audit actions an approval transition records, beside the shared ones
// (request.go).
const (
	ActionApproved = "approved"
	ActionRejected = "rejected"
	ActionAsked    = "asked"
	ActionAnswered = "answered"
	// ActionApproverRemoved is a person taken off the approvers.
	ActionApproverRemoved = "approver_removed"
	// ActionEscalated is the escalation's people made approvers.
	ActionEscalated = "escalated"
)

// CancelledForRequester is the audit detail of an owner or administrator
// withdrawing someone else's request.
const CancelledForRequester = "as an owner or administrator, for the requester"

// ApprovalTransition is what PersistApproval writes.
type ApprovalTransition = Transition[ApprovalState]

// DefaultApproversAdded ends the timeline entry of a removal that left
// nobody able to settle the request, so the defaults became approvers.
const DefaultApproversAdded = "nobody left could settle the request, so the organisation's owners and administrators were made its approvers"

// persistRetry retries until the database takes the write: a transition
// the workflow made must reach the read model.
var persistRetry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}

// persistOptions run the write as an activity. Temporal records the task
// that schedules it (with the Update's acceptance or the expiry timer's
// firing) before any worker may run it, so the database never holds a
// transition that the workflow's history lacks. A write cut off by a crash
// is retried after the timeout; Seq makes the retry change nothing.
var persistOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         persistRetry,
}

// persistLocalOptions are for histories from before persistChange, which
// wrote transitions with a local activity.
var persistLocalOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout: 10 * time.Second,
	RetryPolicy:         persistRetry,
}

// persistChange marks where the workflow began writing transitions with a
// regular activity. A local activity ran inside the workflow task, so a
// crash before the task completed left a write that Temporal never
// recorded (and a later transition under the same Seq was skipped).
const persistChange = "persist-after-record"

// emailChange marks where the workflow started emailing approvers and
// askers; histories from before it replay without the emails.
const emailChange = "email-people"

// timersChange marks where the workflow began reminding approvers and
// escalating; histories from before it replay without either timer.
const timersChange = "approval-timers"

// escalationStandInsChange marks where the escalation began asking who
// stands in for its people away when it fires (approval.standIns).
const escalationStandInsChange = "escalation-stand-ins"

// standInsOptions read who stands in as a transition is written:
// retried until the database answers, since the escalation waits for it.
var standInsOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         persistRetry,
}

// emailOptions send an email on the delivery schedule: five attempts, 1,
// 4, 16 and 64 minutes apart.
// Cancelling one waits for the server to confirm, so the workflow never
// completes in the task that answers an Update while an email is in flight.
var emailOptions = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy:         DeliveryRetryPolicy(time.Minute),
	WaitForCancellation: true,
}

// Bounds of the model screen, which every approver waits for: an attempt
// may take ScreenAttemptTimeout, the screen ScreenTimeout in all, over at
// most three attempts. A model slower than that is not waited for.
const (
	ScreenAttemptTimeout = 30 * time.Second
	ScreenTimeout        = 75 * time.Second
)

// screenOptions run the model screen within its bounds. An endpoint that
// refuses the request (a 4xx) is not asked again.
var screenOptions = workflow.ActivityOptions{
	StartToCloseTimeout:    ScreenAttemptTimeout,
	ScheduleToCloseTimeout: ScreenTimeout,
	RetryPolicy:            &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
}

// Approval is the workflow of one approval: it waits for decisions,
// questions, answers and cancellation (Updates) and for expiry (a timer).
func Approval(ctx workflow.Context, in ApprovalInput) (ApprovalState, error) {
	a := &approval{in: in}
	a.Request = NewRequest(ctx, a, in.ApprovalID, in.OrganizationID, in.Requester, ActivityPersistApproval, ApprovalState{
		Status: states.Pending, ApproverIDs: slices.Clone(in.ApproverIDs), ApprovedBy: []string{}, Questions: []Question{},
		OnBehalfOf: maps.Clone(in.OnBehalfOf)})
	if a.in.RequiredApprovals < 1 {
		a.in.RequiredApprovals = 1
	}
	if err := a.setup(ctx); err != nil {
		return a.State, err
	}
	return a.run(ctx)
}

type approval struct {
	Request[ApprovalState]
	in ApprovalInput
}

func (a *approval) setup(ctx workflow.Context) error {
	return SetUpdates(ctx, append(a.AskingUpdates(),
		Update{UpdateDecide, a.decide, Validator(a.in.ApprovalID, func(r DecideRequest) error { return checkDecide(&a.in, &a.State, r) })},
		Update{UpdateAsk, a.ask, Validator(a.in.ApprovalID, func(r AskRequest) error { return checkAsk(&a.in, &a.State, r) })},
		Update{UpdateAnswer, a.answer, Validator(a.in.ApprovalID, func(r AnswerRequest) error { return checkAnswer(&a.in, &a.State, r) })},
		Update{UpdateRemoveApprover, a.removeApprover, Validator(a.in.ApprovalID, a.State.checkRemoveApprover)},
	))
}

func (a *approval) run(ctx workflow.Context) (ApprovalState, error) {
	createdAt := workflow.Now(ctx)
	a.local = workflow.GetVersion(ctx, persistChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion
	screened := a.screen(ctx)
	if err := a.Persist(ctx, ApprovalTransition{Action: ActionCreated, Event: events.ApprovalRequested, Detail: screened}); err != nil {
		return a.State, err
	}
	a.emails = workflow.GetVersion(ctx, emailChange, workflow.DefaultVersion, 1) >= 1
	a.StartEmails(ctx)
	a.EmailAsked(ctx)
	a.created = true
	if workflow.GetVersion(ctx, timersChange, workflow.DefaultVersion, 1) >= 1 {
		if err := a.Await(ctx, a.pending, a.timers(createdAt)); err != nil {
			return a.State, err
		}
	}
	if err := a.Expire(ctx, a.in.ExpiresAt, a.pending, func() ApprovalTransition {
		a.Settle(ctx, states.Expired)
		return ApprovalTransition{Action: ActionExpired, Event: events.ApprovalExpired}
	}); err != nil {
		return a.State, err
	}
	return a.State, a.Finish(ctx)
}

// screen asks the organisation's model screen about the approval, when it
// was on at the start, before the approval is recorded as created and
// anyone is asked: its concerns are in place before approvers see them,
// and a decision sent meanwhile waits (see locked) and is held to them.
// It returns what the "created" entry says of it. A screen that fails
// for good is left out: the request goes on without it. Histories from
// before the screen never have Screen set, so they replay unchanged.
func (a *approval) screen(ctx workflow.Context) string {
	if !a.in.Screen {
		return ""
	}
	var res ScreenResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, screenOptions), ActivityScreenApproval,
		ScreenInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID}).Get(ctx, &res)
	switch {
	case err != nil:
		return "the model screen failed (" + screenFailure(err) + "), so the request proceeds without it"
	case res.Skipped != "":
		return "the model screen did not run: " + res.Skipped
	case len(res.Concerns) == 0:
		return "the model screen raised no concern"
	}
	a.State.ScreenConcerns = res.Concerns
	var under []string
	for _, c := range res.Concerns {
		if !slices.Contains(under, c.Principle) {
			under = append(under, c.Principle)
		}
	}
	n := strconv.Itoa(len(res.Concerns)) + " concerns"
	if len(res.Concerns) == 1 {
		n = "1 concern"
	}
	return "the model screen raised " + n + " (" + strings.Join(under, ", ") + "), so approving needs a written reason"
}

// screenFailure says why the screen failed for good, as the timeline
// tells it.
func screenFailure(err error) string {
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "the model did not answer in time"
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}

func (a *approval) decide(ctx workflow.Context, req DecideRequest) (ApprovalState, error) {
	err := a.Apply(ctx, func() (ApprovalTransition, error) {
		if err := checkDecide(&a.in, &a.State, req); err != nil {
			return ApprovalTransition{}, err
		}
		away := StandsInFor(a.State.OnBehalfOf, req.ActorID)
		t := ApprovalTransition{ActorID: req.ActorID, ActorName: req.ActorName, Detail: JoinDetail(req.Via, OnBehalf(away), req.Note)}
		if req.Decision == DecisionReject {
			a.decided(ctx, states.Rejected, req)
			t.Action, t.Event = ActionRejected, events.ApprovalRejected
			return t, nil
		}
		a.State.ApprovedBy = append(a.State.ApprovedBy, req.ActorID)
		a.State.ApprovalsSoFar = len(a.State.ApprovedBy)
		t.Action = ActionApproved
		if a.State.ApprovalsSoFar < a.in.RequiredApprovals {
			return t, nil // recorded; more approvals needed
		}
		a.decided(ctx, states.Approved, req)
		if a.in.RequiredApprovals == 1 {
			a.State.ApprovedInput, a.State.Changes = applyCorrections(a.in.Input, req.Corrections)
		} else {
			// Several approvers agreed to the proposal as sent.
			a.State.ApprovedInput, a.State.Changes = applyCorrections(a.in.Input, nil)
		}
		t.Event = events.ApprovalApproved
		return t, nil
	})
	return a.State, err
}

// decided settles the approval with a person's decision.
func (a *approval) decided(ctx workflow.Context, status string, req DecideRequest) {
	now := workflow.Now(ctx).UTC()
	a.State.Status = status
	a.State.DecidedByID, a.State.DecidedByName, a.State.DecidedAt = req.ActorID, req.ActorName, &now
	a.State.DecidedOnBehalfOf = StandsInFor(a.State.OnBehalfOf, req.ActorID)
	a.State.Note, a.State.Reason = req.Note, req.Reason
}

func (a *approval) ask(ctx workflow.Context, req AskRequest) (ApprovalState, error) {
	err := a.Apply(ctx, func() (ApprovalTransition, error) {
		if err := checkAsk(&a.in, &a.State, req); err != nil {
			return ApprovalTransition{}, err
		}
		a.State.Questions = append(a.State.Questions, Question{QuestionID: req.QuestionID, Question: req.Question,
			AskedBy: req.ActorName, AskedByID: req.ActorID, AskedAt: workflow.Now(ctx).UTC()})
		return ApprovalTransition{Action: ActionAsked, Event: events.ApprovalQuestion, ActorID: req.ActorID,
			ActorName: req.ActorName, Detail: req.Question}, nil
	})
	return a.State, err
}

func (a *approval) answer(ctx workflow.Context, req AnswerRequest) (ApprovalState, error) {
	var asker string
	err := a.Apply(ctx, func() (ApprovalTransition, error) {
		if err := checkAnswer(&a.in, &a.State, req); err != nil {
			return ApprovalTransition{}, err
		}
		now := workflow.Now(ctx).UTC()
		for i := range a.State.Questions {
			if q := &a.State.Questions[i]; q.QuestionID == req.QuestionID {
				answer := req.Answer
				q.Answer, q.AnsweredAt = &answer, &now
				asker = q.AskedByID
			}
		}
		return ApprovalTransition{Action: ActionAnswered, Event: events.ApprovalAnswered, ActorID: req.Requester, Detail: req.Answer}, nil
	})
	if err == nil && asker != "" {
		a.Email(ctx, ActivityEmailAnswer, EmailAnswerInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID,
			QuestionID: req.QuestionID, AskerID: asker})
	}
	return a.State, err
}

// removeApprover takes a person off the approvers. When those left cannot
// settle the request, the organisation's owners and administrators join
// them, as for a request that names nobody, and are emailed like the
// approvers at creation (the email skips whoever was already emailed).
// The Update adds commands only to histories that receive it, so older
// histories replay unchanged without a version marker.
func (a *approval) removeApprover(ctx workflow.Context, req RemoveApproverRequest) (ApprovalState, error) {
	added := false
	err := a.Apply(ctx, func() (ApprovalTransition, error) {
		if err := a.State.checkRemoveApprover(req); err != nil {
			return ApprovalTransition{}, err
		}
		a.State.ApproverIDs = slices.DeleteFunc(slices.Clone(a.State.ApproverIDs), func(id string) bool { return id == req.PersonID })
		t := ApprovalTransition{Action: ActionApproverRemoved, ActorID: req.ActorID, ActorName: req.ActorName,
			Detail: "removed " + req.PersonName + " from the approvers"}
		if a.shortOfApprovers() {
			a.State.ApproverIDs, a.State.OnBehalfOf, added = AddDefaults(a.State.ApproverIDs, a.State.OnBehalfOf, req.Defaults, req.OnBehalfOf, req.PersonID)
		}
		if added {
			t.Detail += "; " + DefaultApproversAdded
		}
		return t, nil
	})
	if err == nil && added {
		a.EmailAsked(ctx)
	}
	return a.State, err
}

// shortOfApprovers reports whether the approvers who may still approve
// (not the requester, not already approved) are fewer than the approvals
// still needed.
func (a *approval) shortOfApprovers() bool {
	able := 0
	for _, id := range a.State.ApproverIDs {
		if id != a.in.RequesterMemberID && !slices.Contains(a.State.ApprovedBy, id) {
			able++
		}
	}
	return able < a.in.RequiredApprovals-a.State.ApprovalsSoFar
}

func (a *approval) pending() bool { return a.State.Status == states.Pending }

// Settle ends the approval without a decision: cancelled or expired.
func (a *approval) Settle(_ workflow.Context, status string) { a.State.Status = status }

func (a *approval) CheckOpen() error { return a.State.checkPending() }
func (a *approval) Asking() (*[]string, *map[string]Delegator) {
	return &a.State.ApproverIDs, &a.State.OnBehalfOf
}
func (a *approval) Acted() []string  { return a.State.ApprovedBy }
func (a *approval) NotAsked() string { return apperr.NotAnApprover }
func (a *approval) EmailAsked(ctx workflow.Context) {
	a.Email(ctx, ActivityEmailApprovers, EmailApproversInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID})
}

// timers are the approval's reminder and escalation, each only when due
// before it expires.
func (a *approval) timers(createdAt time.Time) []Timer {
	var ts []Timer
	if at, ok := ApprovalReminderAt(createdAt, a.in.ExpiresAt); ok {
		ts = append(ts, Timer{at, a.remind})
	}
	if e := a.in.Escalation; e != nil && e.At.Before(a.in.ExpiresAt) {
		ts = append(ts, Timer{e.At, a.escalate})
	}
	return ts
}

// remind emails the approvers who have not decided, once.
func (a *approval) remind(ctx workflow.Context) error {
	var waiting []string
	err := a.Apply(ctx, func() (ApprovalTransition, error) {
		if !a.pending() {
			return ApprovalTransition{}, nil
		}
		for _, id := range a.State.ApproverIDs {
			if id != a.in.RequesterMemberID && !slices.Contains(a.State.ApprovedBy, id) {
				waiting = append(waiting, id)
			}
		}
		now := workflow.Now(ctx).UTC()
		a.State.RemindedAt = &now
		return ApprovalTransition{Action: ActionReminded, Detail: "reminded " + strconv.Itoa(len(waiting)) + " approvers who had not decided"}, nil
	})
	if err == nil && len(waiting) > 0 {
		a.Email(ctx, ActivityEmailApprovers, EmailApproversInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID,
			Reminder: true, PersonIDs: waiting})
	}
	return err
}

// escalate makes the escalation's people approvers of a request still
// pending and emails them the page (the email skips whoever was emailed
// already). Each of them away now is replaced by who stands in for them,
// as on a request made now (standIns).
func (a *approval) escalate(ctx workflow.Context) error {
	standIns, err := a.standIns(ctx)
	if err != nil {
		return err
	}
	added := 0
	err = a.Apply(ctx, func() (ApprovalTransition, error) {
		if !a.pending() {
			return ApprovalTransition{}, nil
		}
		ids := slices.Clone(a.State.ApproverIDs)
		var delegated []string
		for _, id := range a.in.Escalation.ApproverIDs {
			if slices.Contains(ids, id) {
				continue
			}
			i := slices.IndexFunc(standIns, func(r AddDelegateRequest) bool { return r.DelegatorID == id })
			switch {
			case i < 0:
				ids = append(ids, id)
			case slices.Contains(ids, standIns[i].DelegateID), slices.Contains(a.in.Escalation.ApproverIDs, standIns[i].DelegateID):
				// Asked already, or named by the escalation too, when they
				// act in their own name, as on a request made now.
				continue
			default:
				var detail string
				ids, a.State.OnBehalfOf, detail = addDelegate(ids, a.State.OnBehalfOf, standIns[i])
				delegated = append(delegated, detail)
			}
			added++
		}
		now := workflow.Now(ctx).UTC()
		a.State.ApproverIDs, a.State.EscalatedAt = ids, &now
		return ApprovalTransition{Action: ActionEscalated, Event: events.ApprovalEscalated,
			Detail: JoinDetail(append([]string{"still pending, so it was escalated: " + strconv.Itoa(added) + " more approvers asked"}, delegated...)...)}, nil
	})
	if err == nil && added > 0 {
		a.EmailAsked(ctx)
	}
	return err
}

// standIns reads who stands in now for the escalation's people who are
// away. The people were resolved at creation, and a delegation that
// began since hands over only the requests already waiting on its
// delegator, which an escalation not yet fired is not. Histories from
// before escalationStandInsChange replay without the read.
func (a *approval) standIns(ctx workflow.Context) ([]AddDelegateRequest, error) {
	if workflow.GetVersion(ctx, escalationStandInsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil, nil
	}
	var res StandInsResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, standInsOptions), ActivityStandIns,
		StandInsInput{OrganizationID: a.in.OrganizationID, Requester: a.in.Requester, PersonIDs: a.in.Escalation.ApproverIDs}).Get(ctx, &res)
	return res.StandIns, err
}
