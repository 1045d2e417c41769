package workflows

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
)

// Request is what every request kind's workflow (approval, collection,
// review) is built on, over its kind's state S: transitions applied one at
// a time, numbered and written through the kind's persist activity, the
// AssentStatus search attribute, expiry, and emails sent without holding
// up the request. A kind adds only its own Updates and rules.
type Request[S RequestState] struct {
	// kind is the kind's workflow built on this core.
	kind RequestKind[S]
	// id and orgID name the request, requester who made it;
	// persistActivity writes its transitions.
	id, orgID, requester, persistActivity string
	State                                 S
	lock                                  workflow.Mutex
	seq                                   int
	// created is set once the "created" transition is written.
	created bool
	// local writes transitions with a local activity, as histories from
	// before persistChange did (approvals only).
	local bool
	// emails is whether this run emails people (see emailChange).
	emails bool
	// emailCtx is cancelled when the request settles: nobody needs an
	// email about it any more. emailing counts the emails in flight.
	emailCtx     workflow.Context
	cancelEmails workflow.CancelFunc
	emailing     int
	// indexedStatus is the AssentStatus search attribute's value.
	indexedStatus string
	// Changes answers the run's patches; a kind may set a baseline.
	Changes Changes
}

// RequestState is a request kind's state (approvals.State, …); its
// status is what the search attribute and the read model show.
type RequestState interface{ CurrentStatus() string }

// NewRequest is the core of a kind's workflow: kind is the workflow built
// on it, id and orgID name the request, requester made it, and
// persistActivity writes its transitions. It emails people unless the kind
// turns emails off (SendEmails).
func NewRequest[S RequestState](ctx workflow.Context, kind RequestKind[S], id, orgID, requester, persistActivity string, state S) Request[S] {
	return Request[S]{kind: kind, emails: true, id: id, orgID: orgID, requester: requester, persistActivity: persistActivity, State: state,
		lock: workflow.NewMutex(ctx), indexedStatus: state.CurrentStatus()}
}

// Transition is one change a request's workflow made, what its kind's
// persist activity writes: the new state, the audit entry and, when Event
// is set, the event for the outbox.
type Transition[S RequestState] struct {
	// RequestID is the approval's, collection's or review's id.
	RequestID      string
	OrganizationID string
	Action         string
	Event          string
	ActorID        string
	ActorName      string
	// Seq numbers the workflow's transitions from 1, so a retried write is
	// recognised and skipped.
	Seq int
	// Detail is the audit entry's free text: a question, a note, a change.
	Detail string
	At     time.Time
	State  S
	// AskByEmail has the persist activity, once the transition is written,
	// email the people the request asks: one attempt, its answer saying
	// whether it reached them all (Persisted). Only "created" sets it.
	AskByEmail bool `json:",omitempty"`
}

// Persisted is what a persist activity answers: whether it reached
// everyone it emailed (Transition.AskByEmail); the email activity follows
// for those it did not.
type Persisted struct {
	Emailed bool
}

// EmailWithCreatedChange marks how a request's "created" write runs.
// Version 1: a regular activity that also emails the people asked, one
// round trip fewer than an email activity of its own. Version 2
// (createdInTask): the same write as a local activity inside the task
// that runs it, which costs no activity task and no second workflow task.
const EmailWithCreatedChange = "email-with-created"

// createdInTask is EmailWithCreatedChange's version from which "created"
// is written in the workflow task. That is safe for this transition only:
// what it writes follows from the start (or, after the model screen, from
// an activity's result), which Temporal recorded before the task began, so
// a crash before the task completes leaves nothing the history lacks, and
// the task's retry finds Seq 1 written. A transition an Update or a timer
// causes waits for a regular activity (persistOptions): its cause is
// recorded only with the task that schedules the write.
const createdInTask = 2

// Audit actions every kind's transitions record alike.
const (
	ActionCreated   = "created"
	ActionExpired   = "expired"
	ActionCancelled = "cancelled"
	// ActionReminded is a request's one reminder sent to who has not acted.
	ActionReminded = "reminded"
	// ActionEscalated is an approval's escalation: its people made
	// approvers. Like expiry and the reminder, Assent's own doing.
	ActionEscalated = "escalated"
)

// PersistRetry retries until the database takes the write: a transition
// the workflow made must reach the read model. Each call is a policy of its
// own, so no caller changes another's.
func PersistRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
}

// persistOptions run the write as an activity. Temporal records the task
// that schedules it (with the Update's acceptance or the expiry timer's
// firing) before any worker may run it, so the database never holds a
// transition that the workflow's history lacks. A write cut off by a crash
// is retried after the timeout; Seq makes the retry change nothing.
var persistOptions = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Second,
	RetryPolicy:         PersistRetry(),
}

// persistLocalOptions write with a local activity: "created" since
// createdInTask, and every transition of the histories from before an
// approval wrote them with a regular activity (PersistLocally). Retried
// until the database takes the write, as persistOptions are: a local
// activity's retries otherwise end at its first attempt's deadline, and
// the request's workflow with them. The SDK retries inside the task while
// the wait is under the task's timeout, then from a timer in later tasks.
var persistLocalOptions = workflow.LocalActivityOptions{
	StartToCloseTimeout:    10 * time.Second,
	ScheduleToCloseTimeout: 10 * 365 * 24 * time.Hour,
	RetryPolicy:            PersistRetry(),
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

// ErrRequestMissing is the error type of a transition whose record is
// gone (models.ErrRequestMissing): the workflow ends with it, as nothing it
// does can be written.
const ErrRequestMissing = "request_missing"

// transitionFields is Transition without its methods, for decoding.
type transitionFields[S RequestState] Transition[S]

// UnmarshalJSON reads a transition, also one scheduled by a worker from
// before the kinds shared it, which named the id after the kind.
func (t *Transition[S]) UnmarshalJSON(b []byte) error {
	v := struct {
		*transitionFields[S]
		ApprovalID, CollectionID, ReviewID string
	}{transitionFields: (*transitionFields[S])(t)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	t.RequestID = cmp.Or(t.RequestID, v.ApprovalID, v.CollectionID, v.ReviewID)
	return nil
}

// Apply applies one change under the lock and persists it; apply
// returns a transition without Action when nothing changed.
func (r *Request[S]) Apply(ctx workflow.Context, apply func() (Transition[S], error)) error {
	var t Transition[S]
	return r.locked(ctx, func() (bool, error) {
		var err error
		t, err = apply()
		return err == nil && t.Action != "", err
	}, func() error { return r.Persist(ctx, t) })
}

// Persist numbers t, completes it with the state and writes it: with a
// regular activity, so that Temporal records its cause first (see
// persistOptions).
func (r *Request[S]) Persist(ctx workflow.Context, t Transition[S]) error {
	_, err := r.persist(ctx, t)
	return err
}

// persist is Persist with the activity's answer (none from activities
// that answered before there was one).
func (r *Request[S]) persist(ctx workflow.Context, t Transition[S]) (res Persisted, err error) {
	return r.write(ctx, t, r.local)
}

// write is persist with the choice of a local activity (inTask), whose
// answer only histories from before PersistLocally lack.
func (r *Request[S]) write(ctx workflow.Context, t Transition[S], inTask bool) (res Persisted, err error) {
	t.RequestID, t.OrganizationID = r.id, r.orgID
	if t.Seq, t.At, err = r.next(ctx, r.State.CurrentStatus()); err != nil {
		return res, err
	}
	t.State = r.State
	if !inTask {
		ctx = workflow.WithActivityOptions(ctx, persistOptions)
		err = workflow.ExecuteActivity(ctx, r.persistActivity, t).Get(ctx, &res)
		return res, err
	}
	// The local activity gets t as it is, sharing State's slices and maps:
	// nothing changes them meanwhile, as every Update waits in locked until
	// "created" is written.
	ctx = workflow.WithLocalActivityOptions(ctx, persistLocalOptions)
	f := workflow.ExecuteLocalActivity(ctx, r.persistActivity, t)
	if r.local {
		return res, f.Get(ctx, nil) // its writes answered nothing then
	}
	err = f.Get(ctx, &res)
	return res, err
}

// Wait is the rest of a request's life once it has begun: its timers
// fired in time order while it is open (await), then, if it is still open
// at expiresAt, Settle'd as expired with the expired transition written,
// and the end (finish). It returns the final state.
func (r *Request[S]) Wait(ctx workflow.Context, expiresAt time.Time, timers []Timer, expired Transition[S]) (S, error) {
	open := func() bool { return r.kind.CheckOpen() == nil }
	if err := r.await(ctx, open, timers); err != nil {
		return r.State, err
	}
	if err := r.expire(ctx, expiresAt, open, func() Transition[S] {
		r.kind.Settle(ctx, states.Expired)
		return expired
	}); err != nil {
		return r.State, err
	}
	return r.State, r.finish(ctx)
}

// Remind is a request's one reminder, a timer's Fire: while it is open,
// under the lock, the people waiting returns are reminded, *at records
// when, and the transition says how many of whom ("approvers who had not
// decided"); the email activity then goes to them with the input email
// makes of their ids.
func (r *Request[S]) Remind(ctx workflow.Context, at **time.Time, waiting func() []string, whom, activity string, email func(ids []string) any) error {
	var ids []string
	err := r.Apply(ctx, func() (Transition[S], error) {
		if r.kind.CheckOpen() != nil {
			return Transition[S]{}, nil
		}
		ids = waiting()
		now := workflow.Now(ctx).UTC()
		*at = &now
		return Transition[S]{Action: ActionReminded, Detail: "reminded " + strconv.Itoa(len(ids)) + " " + whom}, nil
	})
	if err == nil && len(ids) > 0 {
		r.Email(ctx, activity, email(ids))
	}
	return err
}

// expire waits until the request settles or expiresAt, and then, if it is
// still open, applies expired.
func (r *Request[S]) expire(ctx workflow.Context, expiresAt time.Time, open func() bool, expired func() Transition[S]) error {
	settled, err := workflow.AwaitWithTimeout(ctx, expiresAt.Sub(workflow.Now(ctx)), func() bool { return !open() })
	if err != nil || settled {
		return err
	}
	return r.Apply(ctx, func() (Transition[S], error) {
		if !open() {
			return Transition[S]{}, nil // settled while we waited for the lock
		}
		return expired(), nil
	})
}

// cancelled is the transition of a cancel req asked for; requester is who
// made the request.
func cancelled[S RequestState](req CancelRequest, requester string) Transition[S] {
	t := Transition[S]{Action: ActionCancelled, ActorID: req.ActorID, ActorName: req.ActorName}
	if req.ActorID != requester {
		t.Detail = CancelledForRequester
	}
	return t
}

// startEmails lets the request send emails from here on.
func (r *Request[S]) startEmails(ctx workflow.Context) {
	r.emailCtx, r.cancelEmails = workflow.WithCancel(workflow.WithActivityOptions(ctx, emailOptions))
}

// Begin writes the request's first transition (created), lets it email
// from then on, emails the people it asks and takes Updates, which wait
// until then.
func (r *Request[S]) Begin(ctx workflow.Context, created Transition[S]) error {
	emailed, err := r.PersistCreated(ctx, created)
	if err != nil {
		return err
	}
	r.Started(ctx, emailed)
	return nil
}

// PersistCreated writes the "created" transition and, on workflows begun
// since EmailWithCreatedChange, has the same write email the people
// asked; it reports whether that reached them all. Since createdInTask
// the write runs inside the workflow task.
func (r *Request[S]) PersistCreated(ctx workflow.Context, created Transition[S]) (emailed bool, err error) {
	if r.local {
		return false, r.Persist(ctx, created)
	}
	v := r.Changes.Version(ctx, EmailWithCreatedChange, createdInTask)
	if v == workflow.DefaultVersion {
		return false, r.Persist(ctx, created)
	}
	created.AskByEmail = true
	res, err := r.write(ctx, created, v >= createdInTask)
	return res.Emailed, err
}

// Started follows the "created" step: the request emails from then on,
// emails the people it asks unless the write already did (emailed), and
// takes Updates. Begin calls it; an approval calls it itself, deciding
// first whether its history emails.
func (r *Request[S]) Started(ctx workflow.Context, emailed bool) {
	r.startEmails(ctx)
	if !emailed {
		r.kind.EmailAsked(ctx)
	}
	r.created = true
}

// SendEmails sets whether this run emails people: an approval's history
// from before it emailed replays without them.
func (r *Request[S]) SendEmails(on bool) { r.emails = on }

// PersistLocally writes transitions with a local activity, as an
// approval's histories from before it wrote them with a regular one did.
func (r *Request[S]) PersistLocally(on bool) { r.local = on }

// locked applies one change under the lock; apply returns whether there is
// a transition to write, and write writes it before the Update returns, so
// the caller's next GET shows it.
func (r *Request[S]) locked(ctx workflow.Context, apply func() (bool, error), write func() error) error {
	// An Update may be delivered before the main function has written
	// "created"; it waits, so the record and its history read in order.
	if err := workflow.Await(ctx, func() bool { return r.created }); err != nil {
		return err
	}
	if err := r.lock.Lock(ctx); err != nil {
		return err
	}
	defer r.lock.Unlock()
	changed, err := apply()
	if err != nil || !changed {
		return err
	}
	return write()
}

// next numbers a transition and indexes the status it leaves the request
// in. The start sets AssentStatus; upsert only a change, since each upsert
// is one more history event and server write.
func (r *Request[S]) next(ctx workflow.Context, status string) (seq int, at time.Time, err error) {
	r.seq++
	at = workflow.Now(ctx).UTC()
	if status != r.indexedStatus {
		if err := workflow.UpsertTypedSearchAttributes(ctx, SearchStatus.ValueSet(status)); err != nil {
			return 0, at, err
		}
		r.indexedStatus = status
	}
	return r.seq, at, nil
}

// Email starts an email activity without waiting for it: a slow or failing
// mail server must not hold up a decision. A send that fails for good is
// logged and visible in the workflow's history; one still retrying when
// the request settles is cancelled.
func (r *Request[S]) Email(ctx workflow.Context, activity string, arg any) {
	if !r.emails {
		return
	}
	f := workflow.ExecuteActivity(r.emailCtx, activity, arg)
	r.emailing++
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := f.Get(ctx, nil)
		r.emailing--
		if err != nil && !temporal.IsCanceledError(err) {
			workflow.GetLogger(ctx).Warn("email not sent", "activity", activity, "error", err)
		}
	})
}

// finish lets in-flight Updates end, then stops the emails still in flight
// and waits for the server to say so. The confirmation arrives in a later
// task than the Update that settled the request: completing in the same
// task as an email's result would fail that task, and with it the Update.
func (r *Request[S]) finish(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if r.emailing > 0 {
		r.cancelEmails()
		return workflow.Await(ctx, func() bool { return r.emailing == 0 })
	}
	return nil
}

// SetUpdates registers Update handlers, each with its validator.
func SetUpdates(ctx workflow.Context, handlers []Update) error {
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.Name, h.Handler, workflow.UpdateHandlerOptions{Validator: h.Validator}); err != nil {
			return err
		}
	}
	return nil
}

type Update struct {
	Name      string
	Handler   any
	Validator any
}

// Target is embedded in every Update argument. A payload copied from one
// request's Update onto another's must be refused even if it decodes (see
// internal/payloadcodec, the other layer), so each argument names its
// request and the validator compares.
type Target struct {
	// RequestID is the id of the approval, collection or review the
	// argument is for; requests.Records.Update fills it in.
	RequestID string
	// use is the message the argument's payload was bound to, set by the
	// payload codec as it decodes (never sent): payloadcodec's interceptor
	// refuses a new Update whose argument was bound to another.
	use string
}

// For addresses the argument to request id.
func (t *Target) For(id string) { t.RequestID = id }

// SetPayloadUse implements payloadcodec.Setter.
func (t *Target) SetPayloadUse(use string) { t.use = use }

// PayloadUse implements payloadcodec.Bound.
func (t Target) PayloadUse() string { return t.use }

func (t Target) requestID() string { return t.RequestID }

// Argument is an Update's argument (a pointer to it), addressed as it is
// sent.
type Argument interface{ For(id string) }

// Validator refuses an argument naming another request than id, or none,
// before check. Only validators compare: they run for new Updates only,
// while an Update already in a history, from a client that did not name
// the request yet, replays through its handler unchanged.
func Validator[T interface{ requestID() string }](id string, check func(T) error) func(workflow.Context, T) error {
	return func(_ workflow.Context, r T) error {
		switch got := r.requestID(); {
		case got == "":
			return Refuse(apperr.Forbidden, "this Update names no request; it was sent by a client older than this worker, or forged")
		case got != id:
			return Refuse(apperr.Forbidden, "this Update is for request %s, not %s", got, id)
		}
		return check(r)
	}
}

// Timer is a moment at which an open request acts: a reminder, an
// escalation.
type Timer struct {
	At   time.Time
	Fire func(ctx workflow.Context) error
}

// await waits for each timer in turn, earliest first, and fires it if the
// request is still open then. It returns once every timer fired or the
// request settled; expiry is the caller's to wait for after it.
func (r *Request[S]) await(ctx workflow.Context, open func() bool, timers []Timer) error {
	slices.SortStableFunc(timers, func(a, b Timer) int { return a.At.Compare(b.At) })
	for _, t := range timers {
		settled, err := workflow.AwaitWithTimeout(ctx, t.At.Sub(workflow.Now(ctx)), func() bool { return !open() })
		if err != nil || settled {
			return err
		}
		if err := t.Fire(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Halfway is the moment between from and to: when a request's one
// reminder goes out, unless its kind says later.
func Halfway(from, to time.Time) time.Time { return from.Add(to.Sub(from) / 2) }

// Refuse is how a workflow refuses an Update: a non-retryable application
// error whose type is an apperr code, which the approvals service maps to
// the API's error (refusals_test.go holds every code to a status other
// than 500).
func Refuse(code, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), code, nil)
}

// RefuseField names the request field at fault in the error details.
func RefuseField(field, format string, args ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, args...), apperr.InvalidRequest, nil, field)
}

// RefuseSettled refuses any change to a request no longer in its kind's
// open status, naming it by noun: "the review is already approved".
func RefuseSettled(status, open, noun string) error {
	if status != open {
		return Refuse(apperr.InvalidState, "the %s is already %s", noun, status)
	}
	return nil
}
