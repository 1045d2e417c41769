package approvals

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
	"github.com/assent-hq/assent/workflows"
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
)

// Transition is what PersistApproval writes.
type Transition = workflows.Transition[State]

// DefaultApproversAdded ends the timeline entry of a removal that left
// nobody able to settle the request, so the defaults became approvers.
const DefaultApproversAdded = "nobody left could settle the request, so the organisation's owners and administrators were made its approvers"

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

// baselineVersion of persistChange, the change every run asks first,
// marks the runs begun with every change here in place, at the versions
// baseline lists: one marker at creation instead of four
// (workflows.Changes).
const baselineVersion = 2

// baseline is what baselineVersion stands for; never edit it.
var baseline = map[string]workflow.Version{emailChange: 1, timersChange: 1,
	escalationStandInsChange: 1, workflows.EmailWithCreatedChange: 2}

// standInsOptions read who stands in as a transition is written:
// retried until the database answers, since the escalation waits for it.
var standInsOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         workflows.PersistRetry(),
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

// Workflow is the workflow of one approval: it waits for decisions,
// questions, answers and cancellation (Updates) and for expiry (a timer).
func Workflow(ctx workflow.Context, in WorkflowInput) (State, error) {
	a := &approval{in: in}
	a.Request = workflows.NewRequest(ctx, a, in.ApprovalID, in.OrganizationID, in.Requester, ActivityPersist, State{
		Status: states.Pending, ApproverIDs: slices.Clone(in.ApproverIDs), ApprovedBy: []string{}, Questions: []AskedQuestion{},
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
	workflows.Request[State]
	in WorkflowInput
}

func (a *approval) setup(ctx workflow.Context) error {
	return workflows.SetUpdates(ctx, a.Updates(
		workflows.Update{Name: UpdateDecide, Handler: a.decide, Validator: workflows.Validator(a.in.ApprovalID, func(r DecideRequest) error { return checkDecide(&a.in, &a.State, r) })},
		workflows.Update{Name: UpdateAsk, Handler: a.ask, Validator: workflows.Validator(a.in.ApprovalID, func(r AskRequest) error { return checkAsk(&a.in, &a.State, r) })},
		workflows.Update{Name: UpdateAnswer, Handler: a.answer, Validator: workflows.Validator(a.in.ApprovalID, func(r AnswerRequest) error { return checkAnswer(&a.in, &a.State, r) })},
	))
}

func (a *approval) run(ctx workflow.Context) (State, error) {
	createdAt := workflow.Now(ctx)
	persist, changes := workflows.Baseline(ctx, persistChange, baselineVersion, baseline)
	a.Changes = changes
	a.PersistLocally(persist == workflow.DefaultVersion)
	screened := a.screen(ctx)
	emailed, err := a.PersistCreated(ctx, Transition{Action: workflows.ActionCreated, Event: events.ApprovalRequested, Detail: screened})
	if err != nil {
		return a.State, err
	}
	a.SendEmails(a.Changes.Version(ctx, emailChange, 1) >= 1)
	a.Started(ctx, emailed)
	var timers []workflows.Timer
	if a.Changes.Version(ctx, timersChange, 1) >= 1 {
		timers = a.timers(createdAt)
	}
	return a.Wait(ctx, a.in.ExpiresAt, timers, Transition{Action: workflows.ActionExpired, Event: events.ApprovalExpired})
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
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, screenOptions), ActivityScreen,
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

func (a *approval) decide(ctx workflow.Context, req DecideRequest) (State, error) {
	err := a.Apply(ctx, func() (Transition, error) {
		if err := checkDecide(&a.in, &a.State, req); err != nil {
			return Transition{}, err
		}
		away := workflows.StandsInFor(a.State.OnBehalfOf, req.ActorID)
		t := Transition{ActorID: req.ActorID, ActorName: req.ActorName, Detail: workflows.JoinDetail(req.Via, workflows.OnBehalf(away), req.Note)}
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
	a.State.DecidedOnBehalfOf = workflows.StandsInFor(a.State.OnBehalfOf, req.ActorID)
	a.State.Note, a.State.Reason = req.Note, req.Reason
}

func (a *approval) ask(ctx workflow.Context, req AskRequest) (State, error) {
	err := a.Apply(ctx, func() (Transition, error) {
		if err := checkAsk(&a.in, &a.State, req); err != nil {
			return Transition{}, err
		}
		a.State.Questions = append(a.State.Questions, AskedQuestion{QuestionID: req.QuestionID, Question: req.Question,
			AskedBy: req.ActorName, AskedByID: req.ActorID, AskedAt: workflow.Now(ctx).UTC()})
		return Transition{Action: ActionAsked, Event: events.ApprovalQuestion, ActorID: req.ActorID,
			ActorName: req.ActorName, Detail: req.Question}, nil
	})
	return a.State, err
}

func (a *approval) answer(ctx workflow.Context, req AnswerRequest) (State, error) {
	var asker string
	err := a.Apply(ctx, func() (Transition, error) {
		if err := checkAnswer(&a.in, &a.State, req); err != nil {
			return Transition{}, err
		}
		now := workflow.Now(ctx).UTC()
		for i := range a.State.Questions {
			if q := &a.State.Questions[i]; q.QuestionID == req.QuestionID {
				answer := req.Answer
				q.Answer, q.AnsweredAt = &answer, &now
				asker = q.AskedByID
			}
		}
		return Transition{Action: ActionAnswered, Event: events.ApprovalAnswered, ActorID: req.Requester, Detail: req.Answer}, nil
	})
	if err == nil && asker != "" {
		a.Email(ctx, ActivityEmailAnswer, EmailAnswerInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID,
			QuestionID: req.QuestionID, AskerID: asker})
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
func (a *approval) Asking() (*[]string, *map[string]workflows.Delegator) {
	return &a.State.ApproverIDs, &a.State.OnBehalfOf
}
func (a *approval) Acted() []string  { return a.State.ApprovedBy }
func (a *approval) NotAsked() string { return apperr.NotAnApprover }
func (a *approval) Removal() workflows.Removal {
	return workflows.Removal{Update: UpdateRemoveApprover, Action: ActionApproverRemoved, Asked: "approvers"}
}

// CheckRemove takes off an approver who approved too: their approval
// stands.
func (a *approval) CheckRemove(string) error { return nil }

// Removed makes the organisation's owners and administrators approvers
// when those left cannot settle the request, as for a request that names
// nobody.
func (a *approval) Removed(_ workflow.Context, req workflows.RemoveAskedRequest, t *Transition) (added bool) {
	if a.shortOfApprovers() {
		a.State.ApproverIDs, a.State.OnBehalfOf, added = workflows.AddDefaults(a.State.ApproverIDs, a.State.OnBehalfOf, req.Defaults, req.OnBehalfOf, req.PersonID)
	}
	if added {
		t.Detail += "; " + DefaultApproversAdded
	}
	return added
}
func (a *approval) EmailAsked(ctx workflow.Context) {
	a.Email(ctx, ActivityEmailApprovers, EmailApproversInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID})
}

// timers are the approval's reminder and escalation, each only when due
// before it expires.
func (a *approval) timers(createdAt time.Time) []workflows.Timer {
	var ts []workflows.Timer
	if at, ok := ReminderAt(createdAt, a.in.ExpiresAt); ok {
		ts = append(ts, workflows.Timer{At: at, Fire: a.remind})
	}
	if e := a.in.Escalation; e != nil && e.At.Before(a.in.ExpiresAt) {
		ts = append(ts, workflows.Timer{At: e.At, Fire: a.escalate})
	}
	return ts
}

// remind emails the approvers who have not decided, once.
func (a *approval) remind(ctx workflow.Context) error {
	return a.Remind(ctx, &a.State.RemindedAt, func() []string {
		var waiting []string
		for _, id := range a.State.ApproverIDs {
			if id != a.in.RequesterMemberID && !slices.Contains(a.State.ApprovedBy, id) {
				waiting = append(waiting, id)
			}
		}
		return waiting
	}, "approvers who had not decided", ActivityEmailApprovers, func(ids []string) any {
		return EmailApproversInput{OrganizationID: a.in.OrganizationID, ApprovalID: a.in.ApprovalID, Reminder: true, PersonIDs: ids}
	})
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
	err = a.Apply(ctx, func() (Transition, error) {
		if !a.pending() {
			return Transition{}, nil
		}
		ids := slices.Clone(a.State.ApproverIDs)
		var delegated []string
		for _, id := range a.in.Escalation.ApproverIDs {
			if slices.Contains(ids, id) {
				continue
			}
			i := slices.IndexFunc(standIns, func(r workflows.AddDelegateRequest) bool { return r.DelegatorID == id })
			switch {
			case i < 0:
				ids = append(ids, id)
			case slices.Contains(ids, standIns[i].DelegateID), slices.Contains(a.in.Escalation.ApproverIDs, standIns[i].DelegateID):
				// Asked already, or named by the escalation too, when they
				// act in their own name, as on a request made now.
				continue
			default:
				var detail string
				ids, a.State.OnBehalfOf, detail = workflows.AddDelegate(ids, a.State.OnBehalfOf, standIns[i])
				delegated = append(delegated, detail)
			}
			added++
		}
		now := workflow.Now(ctx).UTC()
		a.State.ApproverIDs, a.State.EscalatedAt = ids, &now
		return Transition{Action: workflows.ActionEscalated, Event: events.ApprovalEscalated,
			Detail: workflows.JoinDetail(append([]string{"still pending, so it was escalated: " + strconv.Itoa(added) + " more approvers asked"}, delegated...)...)}, nil
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
func (a *approval) standIns(ctx workflow.Context) ([]workflows.AddDelegateRequest, error) {
	if a.Changes.Version(ctx, escalationStandInsChange, 1) == workflow.DefaultVersion {
		return nil, nil
	}
	var res StandInsResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, standInsOptions), workflows.ActivityStandIns,
		StandInsInput{OrganizationID: a.in.OrganizationID, Requester: a.in.Requester, PersonIDs: a.in.Escalation.ApproverIDs}).Get(ctx, &res)
	return res.StandIns, err
}

// minReminderWait is the shortest wait after creation an approval's
// reminder may have: sooner, the approvers' first email is still fresh.
const minReminderWait = time.Hour

// ReminderAt is when an approval's one reminder goes out: halfway
// between creation and expiresAt, when that is at least an hour after
// creation.
func ReminderAt(createdAt, expiresAt time.Time) (time.Time, bool) {
	at := workflows.Halfway(createdAt, expiresAt)
	return at, at.Sub(createdAt) >= minReminderWait
}
