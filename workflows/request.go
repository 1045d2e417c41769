package workflows

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
)

// request is what every request workflow (approval, collection, review)
// is built on, over its kind's state S: transitions applied one at a time,
// numbered and written through the kind's persist activity, the
// AssentStatus search attribute, expiry, and emails sent without holding
// up the request. A kind adds only its own Updates and rules.
type request[S RequestState] struct {
	// kind is the kind's workflow built on this core.
	kind requestKind
	// id and orgID name the request, requester who made it;
	// persistActivity writes its transitions.
	id, orgID, requester, persistActivity string
	state                                 S
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
}

// RequestState is a request kind's state (ApprovalState,
// CollectionState, ReviewState); its status is what the search attribute
// and the read model show.
type RequestState interface{ status() string }

func newRequest[S RequestState](ctx workflow.Context, kind requestKind, id, orgID, requester, persistActivity string, state S) request[S] {
	return request[S]{kind: kind, id: id, orgID: orgID, requester: requester, persistActivity: persistActivity, state: state,
		lock: workflow.NewMutex(ctx), indexedStatus: state.status()}
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

// transition applies one change under the lock and persists it; apply
// returns a transition without Action when nothing changed.
func (r *request[S]) transition(ctx workflow.Context, apply func() (Transition[S], error)) error {
	var t Transition[S]
	return r.locked(ctx, func() (bool, error) {
		var err error
		t, err = apply()
		return err == nil && t.Action != "", err
	}, func() error { return r.persist(ctx, t) })
}

// persist numbers t, completes it with the state and writes it: with a
// regular activity, so that Temporal records its cause first (see
// persistOptions).
func (r *request[S]) persist(ctx workflow.Context, t Transition[S]) error {
	t.RequestID, t.OrganizationID = r.id, r.orgID
	var err error
	if t.Seq, t.At, err = r.next(ctx, r.state.status()); err != nil {
		return err
	}
	t.State = r.state
	if r.local {
		ctx = workflow.WithLocalActivityOptions(ctx, persistLocalOptions)
		return workflow.ExecuteLocalActivity(ctx, r.persistActivity, t).Get(ctx, nil)
	}
	ctx = workflow.WithActivityOptions(ctx, persistOptions)
	return workflow.ExecuteActivity(ctx, r.persistActivity, t).Get(ctx, nil)
}

// expire waits until the request settles or expiresAt, and then, if it is
// still open, applies expired.
func (r *request[S]) expire(ctx workflow.Context, expiresAt time.Time, open func() bool, expired func() Transition[S]) error {
	settled, err := workflow.AwaitWithTimeout(ctx, expiresAt.Sub(workflow.Now(ctx)), func() bool { return !open() })
	if err != nil || settled {
		return err
	}
	return r.transition(ctx, func() (Transition[S], error) {
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
func (r *request[S]) startEmails(ctx workflow.Context) {
	r.emailCtx, r.cancelEmails = workflow.WithCancel(workflow.WithActivityOptions(ctx, emailOptions))
}

// locked applies one change under the lock; apply returns whether there is
// a transition to write, and write writes it before the Update returns, so
// the caller's next GET shows it.
func (r *request[S]) locked(ctx workflow.Context, apply func() (bool, error), write func() error) error {
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
func (r *request[S]) next(ctx workflow.Context, status string) (seq int, at time.Time, err error) {
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

// email starts an email activity without waiting for it: a slow or failing
// mail server must not hold up a decision. A send that fails for good is
// logged and visible in the workflow's history; one still retrying when
// the request settles is cancelled.
func (r *request[S]) email(ctx workflow.Context, activity string, arg any) {
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
func (r *request[S]) finish(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if r.emailing > 0 {
		r.cancelEmails()
		return workflow.Await(ctx, func() bool { return r.emailing == 0 })
	}
	return nil
}

// setUpdates registers Update handlers, each with its validator.
func setUpdates(ctx workflow.Context, handlers []update) error {
	for _, h := range handlers {
		if err := workflow.SetUpdateHandlerWithOptions(ctx, h.name, h.handler, workflow.UpdateHandlerOptions{Validator: h.validator}); err != nil {
			return err
		}
	}
	return nil
}

type update struct {
	name      string
	handler   any
	validator any
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

// validator refuses an argument naming another request than id, or none,
// before check. Only validators compare: they run for new Updates only,
// while an Update already in a history, from a client that did not name
// the request yet, replays through its handler unchanged.
func validator[T interface{ requestID() string }](id string, check func(T) error) func(workflow.Context, T) error {
	return func(_ workflow.Context, r T) error {
		switch got := r.requestID(); {
		case got == "":
			return refuse(apperr.Forbidden, "this Update names no request; it was sent by a client older than this worker, or forged")
		case got != id:
			return refuse(apperr.Forbidden, "this Update is for request %s, not %s", got, id)
		}
		return check(r)
	}
}

// timer is a moment at which an open request acts: a reminder, an
// escalation.
type timer struct {
	at   time.Time
	fire func(ctx workflow.Context) error
}

// await waits for each timer in turn, earliest first, and fires it if the
// request is still open then. It returns once every timer fired or the
// request settled; expiry is the caller's to wait for after it.
func (r *request[S]) await(ctx workflow.Context, open func() bool, timers []timer) error {
	slices.SortStableFunc(timers, func(a, b timer) int { return a.at.Compare(b.at) })
	for _, t := range timers {
		settled, err := workflow.AwaitWithTimeout(ctx, t.at.Sub(workflow.Now(ctx)), func() bool { return !open() })
		if err != nil || settled {
			return err
		}
		if err := t.fire(ctx); err != nil {
			return err
		}
	}
	return nil
}

// The one reminder of a request goes out halfway to its deadline, or
// later for a collection with a distant dueAt.

// reminderLead is how long before a collection's dueAt its reminder goes
// out.
const reminderLead = 24 * time.Hour

// minReminderWait is the shortest wait after creation an approval's
// reminder may have: sooner, the approvers' first email is still fresh.
const minReminderWait = time.Hour

// halfway is the moment between from and to.
func halfway(from, to time.Time) time.Time { return from.Add(to.Sub(from) / 2) }

// CollectionReminderAt is when a collection's one reminder goes out: 24
// hours before dueAt, or halfway between creation and dueAt when dueAt is
// less than 48 hours away (so a reminder never comes right after the
// request). There is none without dueAt, or when it would come at or after
// the expiry.
func CollectionReminderAt(createdAt time.Time, dueAt *time.Time, expiresAt time.Time) (time.Time, bool) {
	if dueAt == nil || !dueAt.After(createdAt) {
		return time.Time{}, false
	}
	at := dueAt.Add(-reminderLead)
	if half := halfway(createdAt, *dueAt); half.After(at) {
		at = half
	}
	return at, at.Before(expiresAt)
}

// ApprovalReminderAt is when an approval's one reminder goes out: halfway
// between creation and expiresAt, when that is at least an hour after
// creation.
func ApprovalReminderAt(createdAt, expiresAt time.Time) (time.Time, bool) {
	at := halfway(createdAt, expiresAt)
	return at, at.Sub(createdAt) >= minReminderWait
}
