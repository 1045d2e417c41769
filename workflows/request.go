package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
)

// request is what every request workflow (approval, collection) shares:
// transitions applied one at a time and numbered, the AssentStatus search
// attribute, and emails sent without holding up the request.
type request struct {
	lock workflow.Mutex
	seq  int
	// created is set once the "created" transition is written.
	created bool
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

func newRequest(ctx workflow.Context, status string) request {
	return request{lock: workflow.NewMutex(ctx), indexedStatus: status}
}

// startEmails lets the request send emails from here on.
func (r *request) startEmails(ctx workflow.Context) {
	r.emailCtx, r.cancelEmails = workflow.WithCancel(workflow.WithActivityOptions(ctx, emailOptions))
}

// locked applies one change under the lock; apply returns whether there is
// a transition to write, and write writes it before the Update returns, so
// the caller's next GET shows it.
func (r *request) locked(ctx workflow.Context, apply func() (bool, error), write func() error) error {
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
func (r *request) next(ctx workflow.Context, status string) (seq int, at time.Time, err error) {
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
func (r *request) email(ctx workflow.Context, activity string, arg any) {
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
func (r *request) finish(ctx workflow.Context) error {
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
func (r *request) await(ctx workflow.Context, open func() bool, timers []timer) error {
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
