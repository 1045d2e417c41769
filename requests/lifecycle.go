package requests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/changes"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// Owner is a kind of record each of which one workflow owns: the request
// kinds, and report versions the publish scan held.
type Owner[T any] interface {
	// Head reads what the shared paths need of a record.
	Head(rec *T) Head
	// WorkflowID names a record's workflow.
	WorkflowID(id string) string
	// Start starts a record's workflow exactly once (StartOnce).
	Start(ctx context.Context, rec *T) error
}

// Rows are where an Owner's records are read on the Update and
// reconciler paths.
type Rows[T any] interface {
	Get(ctx context.Context, orgID, id string) (*T, error)
	// Unowned lists open records no workflow has taken up.
	Unowned(ctx context.Context, olderThan time.Time, limit int) ([]T, error)
}

// Records is how the shared Update and reconciler paths handle one
// Owner's records (T). Request kinds get theirs from NewLifecycle; held
// report versions fill one in.
type Records[T any] struct {
	// Noun names the kind in messages and logs: "request for information".
	Noun string
	// Open is the status of a record still waiting.
	Open  string
	Owner Owner[T]
	Rows  Rows[T]
	Log   *slog.Logger
	// Store and Temporal are where records and workflows live.
	Store    Store
	Temporal client.Client
}

// Store is what the shared paths read and write beside a kind's own
// table: the create's claim and flow, the delegations its hand-over
// follows, and the hub its long-polls hear changes on.
type Store interface {
	Claims
	ClaimedResource(ctx context.Context, c *models.Claim) (string, error)
	ActiveDelegations(ctx context.Context, orgID string, t time.Time) (map[string]models.Delegation, error)
	Changes() *changes.Hub
	// RelaysChanges says whether other processes' changes are heard too
	// (PostgreSQL's NOTIFY), so long-polls need check only seldom.
	RelaysChanges() bool
}

// CheckStatus refuses a status filter that names none of the kind's
// states.
func CheckStatus(status string, all []string) error {
	if status != "" && !slices.Contains(all, status) {
		return apperr.Field(apperr.InvalidRequest, "status", "status must be one of: %s", strings.Join(all, ", "))
	}
	return nil
}

// StartUnowned starts the workflows of open records created before
// olderThan that no workflow took up, such as one whose creating process
// died between writing the record and starting the workflow (see
// Reconcile).
func (r *Records[T]) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	recs, err := r.Rows.Unowned(ctx, olderThan, batch)
	if err != nil {
		return 0, err
	}
	for i := range recs {
		// A record whose workflow exists but has not written its first
		// step means the workers are behind, not that its creator died.
		// The records after it are younger; they wait for a later pass
		// rather than costing Temporal a refused start each (a backlog of
		// thousands would otherwise add thousands of starts every pass).
		exists, err := r.hasWorkflow(ctx, r.Owner.Head(&recs[i]).ID)
		if err != nil {
			return i, err
		}
		if exists {
			return i, nil
		}
		if err := r.Owner.Start(ctx, &recs[i]); err != nil {
			return i, err
		}
	}
	return len(recs), nil
}

// hasWorkflow reports whether the record's workflow was ever started.
func (r *Records[T]) hasWorkflow(ctx context.Context, id string) (bool, error) {
	if r.Temporal == nil {
		return false, errNoTemporal
	}
	_, err := r.Temporal.DescribeWorkflowExecution(ctx, r.Owner.WorkflowID(id), "")
	var missing *serviceerror.NotFound
	switch {
	case errors.As(err, &missing):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("describe workflow %s: %w", r.Owner.WorkflowID(id), err)
	}
	return true, nil
}

// Head is what the shared paths read of a record.
type Head struct {
	ID, OrganizationID, Status string
	// Started is false until the workflow has written its first step.
	Started bool
	// Requester is who made it: a member id, or an agent key's.
	Requester string
	// Asked are the people it asks to act (approvers, respondents,
	// reviewers): the only records a guest may see. Via is how it
	// reached each of them (named, or standing in for someone away).
	Asked []string
	Via   map[string][]models.Via
}

// Cancel withdraws an open record through its workflow's cancel Update,
// which lets the requester, owners and administrators do it.
func (r *Records[T]) Cancel(ctx context.Context, orgID, id, updateID string, who models.Actor) (*T, error) {
	return r.Update(ctx, orgID, id, updateID, workflows.UpdateCancel,
		&workflows.CancelRequest{ActorID: who.ID, ActorName: who.Name, Administrator: who.Administrator})
}

// Update sends an Update to the record's workflow and returns the record
// as the workflow left it. updateID, when set (an Idempotency-Key, a
// form's submission id), makes Temporal run a repeated request once. arg
// is addressed to the record here, for the workflow's validator to check.
func (r *Records[T]) Update(ctx context.Context, orgID, id, updateID, name string, arg workflows.Argument) (*T, error) {
	rec, err := r.Rows.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := r.send(ctx, rec, updateID, name, arg); err != nil {
		return nil, err
	}
	return r.Rows.Get(ctx, orgID, id)
}

// send sends the Update name to the workflow of rec, as read, and waits
// for its outcome (see Update).
func (r *Records[T]) send(ctx context.Context, rec *T, updateID, name string, arg workflows.Argument) error {
	h := r.Owner.Head(rec)
	arg.For(h.ID)
	if r.Temporal == nil {
		return errNoTemporal
	}
	opts := client.UpdateWorkflowOptions{
		WorkflowID:   r.Owner.WorkflowID(h.ID),
		UpdateID:     updateID,
		UpdateName:   name,
		Args:         []any{arg},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	}
	err := r.update(ctx, opts)
	// A create whose start was lost (Temporal slow to answer) leaves its
	// record to the reconciler; whoever acts on it first starts it instead
	// of being told to come back.
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) && r.startLost(ctx, h) {
		err = r.update(ctx, opts)
	}
	if err != nil {
		return r.workflowError(ctx, h, err)
	}
	// The transition may have been persisted by a worker in another
	// process; long-polls in this one hear of it here, without waiting
	// for its relay (or on SQLite, which relays none, the poll).
	r.Store.Changes().Heard(h.ID)
	return nil
}

// update sends an Update and waits for its outcome. A workflow task
// that failed for a race (its completion beside a new event,
// UnhandledCommand) is retried at once, and Temporal refuses Updates
// until then (WorkflowNotReady): that is waited out, a little, before
// answering 503. The refused Update never ran.
func (r *Records[T]) update(ctx context.Context, opts client.UpdateWorkflowOptions) error {
	deadline := time.Now().Add(notReadyWait)
	for pause := 50 * time.Millisecond; ; pause *= 2 {
		handle, err := r.Temporal.UpdateWorkflow(ctx, opts)
		if err == nil {
			err = handle.Get(ctx, nil)
		}
		var notReady *serviceerror.WorkflowNotReady
		left := time.Until(deadline)
		if !errors.As(err, &notReady) || left <= 0 || sleep(ctx, min(pause, left)) != nil {
			return err
		}
	}
}

// startLost starts the workflow of the record h heads if it is still
// open and no workflow has taken it up, and says whether it did.
func (r *Records[T]) startLost(ctx context.Context, h Head) bool {
	fresh, err := r.Rows.Get(ctx, h.OrganizationID, h.ID)
	if err != nil {
		return false
	}
	if fh := r.Owner.Head(fresh); fh.Status != r.Open || fh.Started {
		return false
	}
	if err := r.Owner.Start(ctx, fresh); err != nil {
		r.Log.Warn("start a "+r.Noun+"'s lost workflow on an Update", "id", h.ID, "error", err)
		return false
	}
	r.Log.Info("started a "+r.Noun+"'s lost workflow on an Update", "id", h.ID)
	return true
}

// notReadyWait is how long an Update waits for a workflow whose task
// is being retried to take it, before the API answers 503.
const notReadyWait = 2 * time.Second

// sleep pauses for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// workflowError maps what an Update on a request's workflow returned to
// the API's errors. This is the one place that knows Temporal's errors.
//   - A refusal from the workflow is a typed application error whose type
//     is the API error code and whose detail is the field at fault.
//   - A completed workflow (the request settled) is an invalid_state.
func (r *Records[T]) workflowError(ctx context.Context, h Head, err error) error {
	var refusal *temporal.ApplicationError
	if errors.As(err, &refusal) && apperr.Status(refusal.Type()) != http.StatusInternalServerError {
		e := apperr.New(refusal.Type(), "%s", refusal.Message())
		if refusal.HasDetails() {
			_ = refusal.Details(&e.Field)
		}
		return e
	}
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		// The workflow completes when the request settles; read why.
		if fresh, ferr := r.Rows.Get(ctx, h.OrganizationID, h.ID); ferr == nil {
			if status := r.Owner.Head(fresh).Status; status != r.Open {
				return apperr.New(apperr.InvalidState, "the %s is already %s", r.Noun, status)
			}
		}
		return apperr.New(apperr.Unavailable, "the %s's workflow is not running yet; try again shortly", r.Noun)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return apperr.New(apperr.Unavailable, "the %s's workflow did not answer in time; try again", r.Noun)
	}
	return err
}

// errNoTemporal is what changing a request answers in a process without a
// workflow service.
var errNoTemporal = apperr.New(apperr.Unavailable, "requests cannot be changed here: no workflow service is configured")

// Table is one kind's records on the shared paths: its Records
// (models.Requests).
type Table[T any] interface {
	Rows[T]
	Creatable[T]
	// Reveal sets the once-shown callback secret on a create's answer.
	Reveal(*T) error
	// Load completes a record as a read does (what its kind reads beside
	// its row).
	Load(ctx context.Context, rec *T) error
	// Statuses reads the status of each of ids that exists, for the
	// long-poll.
	Statuses(ctx context.Context, ids []string) (map[string]string, error)
	List(ctx context.Context, orgID, requester string, f models.Filter, p models.Page) ([]T, string, error)
	Waiting(ctx context.Context, orgID, personID string, order models.InboxOrder, limit int) ([]T, error)
	WaitingKeys(ctx context.Context, orgID, personID string, order models.InboxOrder, limit int) ([]models.WaitingKey, error)
	Counts(ctx context.Context, orgID, personID string, dueBefore time.Time) (models.Counts, error)
	InFlow(ctx context.Context, orgID, flowID string) ([]T, error)
	AboutReport(ctx context.Context, orgID, reportID string) ([]T, error)
}

// Kind is what a kind of request tells the shared paths about itself,
// beside its names: each kind's service implements it and hands itself
// to NewLifecycle. Its workflow id is its names' (RequestWorkflowID).
type Kind[T any] interface {
	// Head reads what the shared paths need of a record.
	Head(rec *T) Head
	// Start starts a record's workflow exactly once (StartOnce).
	Start(ctx context.Context, rec *T) error
}

// HandsOver is a Kind with a rule of its own for handing a record to who
// stands in for someone away (AddDelegate), as a review goes only to who
// may read its report; any other kind's record goes to anyone but its
// requester (handoverOf).
type HandsOver[T any] interface {
	Handover(ctx context.Context, rec *T) (Handover, error)
}

// owner is a Kind as the shared Update and reconciler paths handle it,
// its workflows named by its kind.
type owner[T any] struct {
	Kind[T]
	kind string
}

func (o owner[T]) WorkflowID(id string) string { return workflows.RequestWorkflowID(o.kind, id) }

// HeadOf is the head of a request kind's record, asking asked, each
// reached as via says.
func HeadOf(b *models.RequestBase, asked []string, via map[string][]models.Via) Head {
	return Head{ID: b.ID, OrganizationID: b.OrganizationID, Status: b.Status, Started: b.Seq > 0, Requester: b.Requester,
		Asked: asked, Via: via}
}

// handoverOf is the handover of a kind with no rule of its own: a record
// never goes to its requester.
func handoverOf(h Head) (Handover, error) { return Handover{Requester: h.Requester}, nil }

// Names are how a kind of request is named, and its statuses.
type Names struct {
	// Kind names it in search attributes, events and the reconciler:
	// "collection", as its record registers it (models.KindNamed: its
	// noun and open status).
	Kind string
	// States are all of its statuses.
	States []string
	// Workflow is the type its workflow is registered and started under
	// (approvals.WorkflowType, …).
	Workflow string
}

// Lifecycle is what every request kind does alike, written once: create
// bound to its claim (resumed or taken back), get, view, wait, cancel,
// Updates and their refusals, and the reconciler's start. Each kind's
// service embeds one and adds only what is its own.
type Lifecycle[T any] struct {
	names   Names
	table   Table[T]
	kind    Kind[T]
	records *Records[T]
	watcher *Watcher
}

// NewLifecycle returns the kind's shared paths over its table, its
// long-poll watching d's store.
func NewLifecycle[T any](d Deps, names Names, table Table[T], kind Kind[T]) *Lifecycle[T] {
	if names.Workflow == "" {
		// A kind's workflow is started by its registered name; without
		// one, every create would fail only when it starts.
		panic("requests: the " + names.Kind + " kind names no workflow type")
	}
	d = d.Filled()
	named, ok := models.KindNamed(names.Kind)
	if !ok {
		panic("requests: no record registers the " + names.Kind + " kind")
	}
	if !slices.Contains(names.States, named.Open) {
		panic("requests: the " + names.Kind + " kind's states leave out its open status " + named.Open)
	}
	l := &Lifecycle[T]{names: names, table: table, kind: kind, records: &Records[T]{Noun: named.Noun, Open: named.Open,
		Owner: owner[T]{kind, names.Kind}, Rows: table, Log: d.Logger, Store: d.Store, Temporal: d.Temporal}}
	l.watch(d.Store.Changes())
	return l
}

// watch starts the long-poll's watcher over hub, polling as often as the
// store needs (PollInterval).
func (l *Lifecycle[T]) watch(hub *changes.Hub) {
	l.watcher = NewWatcher(hub, l.settled, l.records.Log, PollInterval(l.records.Store.RelaysChanges()))
}

// settled returns those of ids that no longer wait, for the watcher.
func (l *Lifecycle[T]) settled(ctx context.Context, ids []string) ([]string, error) {
	statuses, err := l.table.Statuses(ctx, ids)
	var out []string
	for id, status := range statuses {
		if status != l.records.Open {
			out = append(out, id)
		}
	}
	return out, err
}

// View returns the record for a person: members see their organisation's,
// a guest (an outsider) only those asking them to act.
func (l *Lifecycle[T]) View(ctx context.Context, who models.Actor, id string) (*T, error) {
	rec, err := l.table.Get(ctx, who.OrgID(), id)
	if err != nil {
		return nil, err
	}
	if who.Person != nil && who.Person.Guest != nil && !slices.Contains(l.kind.Head(rec).Asked, who.ID) {
		return nil, apperr.New(apperr.NotFound, "%s not found", strings.TrimSpace(l.records.Noun+" "+id))
	}
	return rec, nil
}

// Wait returns the record once it has settled, or after timeout (0 to
// MaxWait) as it then is.
func (l *Lifecycle[T]) Wait(ctx context.Context, orgID, id string, timeout time.Duration) (*T, error) {
	return Wait(ctx, l.watcher, id, timeout,
		func(ctx context.Context) (*T, error) { return l.table.Get(ctx, orgID, id) },
		func(rec *T) bool { return l.kind.Head(rec).Status == l.records.Open })
}

// Create stores the record build makes and starts its workflow. With a
// claim (an Idempotency-Key), the record is bound to it as it is written,
// so a retry after a crash at any point resumes the same record instead of
// making another. The answer carries the callback secret, shown once.
func (l *Lifecycle[T]) Create(ctx context.Context, claim *models.Claim, build func() (*T, error)) (*T, error) {
	earlier, err := l.records.Store.ClaimedResource(ctx, claim)
	if err != nil {
		return nil, err
	}
	if earlier != "" {
		return l.resume(ctx, claim.OrganizationID, earlier)
	}
	rec, err := build()
	if err != nil {
		return nil, err
	}
	if l.records.Temporal == nil {
		// Checked after the input, so a bad request still hears what is
		// wrong with it; nothing is written that no workflow could own.
		return nil, errNoTemporal
	}
	if earlier, err = Insert(ctx, l.records.Store, l.table, rec, claim); err != nil {
		return nil, err
	}
	h := l.kind.Head(rec)
	if earlier != "" {
		return l.resume(ctx, h.OrganizationID, earlier)
	}
	if err := l.startNew(ctx, rec); err != nil {
		return nil, err
	}
	handed, err := l.handOverBegun(ctx, h)
	if err != nil {
		// The request stands; the delegate is asked when the next
		// hand-over of that delegation reaches it, or not at all.
		l.records.Log.Warn("hand a new "+l.records.Noun+" to who stands in", l.records.Noun, h.ID, "error", err)
	}
	if handed {
		return l.created(ctx, h.OrganizationID, h.ID)
	}
	// The record as written, its callback secret still in hand: what a
	// read of it would answer, one round trip fewer.
	return rec, l.table.Load(ctx, rec)
}

// handOverBegun hands a record just written to who stands in for anyone
// it names who is away: a delegation that began while the record was
// being made (after who it asks was resolved, StandIns) may have handed
// over the requests waiting on its delegator before this one was
// written. Someone asked only as a stand-in is left as StandIns chose
// (their own delegation is not followed past MaxDelegationHops). The
// Update is the delegation's own (HandoverID), so it is applied once.
// It reports whether it handed the record to anyone.
func (l *Lifecycle[T]) handOverBegun(ctx context.Context, h Head) (handed bool, err error) {
	away, err := l.records.Store.ActiveDelegations(models.FreshSettings(ctx), h.OrganizationID, models.Now())
	if err != nil || len(away) == 0 {
		return false, err
	}
	var errs []error
	for _, id := range h.Asked {
		d, ok := away[id]
		if _, standsIn := models.StandsInFor(h.Via[id]); !ok || standsIn {
			continue
		}
		chain := Chain(away, id)
		if len(chain) == 0 || slices.Contains(h.Asked, chain[len(chain)-1]) {
			continue
		}
		errs = append(errs, l.AddDelegate(ctx, h.OrganizationID, []string{h.ID}, HandoverID(d, chain[len(chain)-1]), id, away))
		handed = true
	}
	return handed, errors.Join(errs...)
}

// created is the stored row a create answers with, with its callback
// secret shown.
func (l *Lifecycle[T]) created(ctx context.Context, orgID, id string) (*T, error) {
	rec, err := l.table.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	return rec, l.table.Reveal(rec)
}

// resume finishes the create an earlier attempt of the same claimed
// request began: the record it made, its workflow started if it may not
// have been.
func (l *Lifecycle[T]) resume(ctx context.Context, orgID, id string) (*T, error) {
	rec, err := l.created(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if !l.kind.Head(rec).Started {
		if err := l.kind.Start(ctx, rec); err != nil {
			l.records.Log.Error("start "+l.records.Noun+" workflow", l.records.Noun, id, "error", err)
			return nil, apperr.New(apperr.Unavailable, "the %s could not be started yet; retry with the same Idempotency-Key", l.records.Noun)
		}
	}
	return rec, nil
}

// startNew starts the workflow of a record just written, or takes the
// record back when it cannot: nothing may be left that no workflow owns.
// Should the removal fail too, the reconciler starts it later. A start
// that timed out may still have gone through, so the workflow is looked
// for first; one that began after the look ends itself when it finds no
// record (models.ErrRequestMissing).
func (l *Lifecycle[T]) startNew(ctx context.Context, rec *T) error {
	err := l.kind.Start(ctx, rec)
	if err == nil {
		return nil
	}
	h := l.kind.Head(rec)
	look, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if started, lookErr := l.records.hasWorkflow(look, h.ID); lookErr == nil && started {
		l.records.Log.Warn("the "+l.records.Noun+" workflow's start answered an error but had started", l.records.Noun, h.ID, "error", err)
		return nil
	}
	l.records.Log.Error("start "+l.records.Noun+" workflow", l.records.Noun, h.ID, "error", err)
	removed, derr := TakeBack(context.WithoutCancel(ctx), l.records.Store, l.table, h.OrganizationID, h.ID)
	switch {
	case derr != nil:
		// The record stays, and the reconciler starts it.
		l.records.Log.Error("remove "+l.records.Noun+" after failed start", l.records.Noun, h.ID, "error", derr)
		return apperr.New(apperr.Unavailable, "the %s could not be started yet; it starts within a minute, and a retry with the same Idempotency-Key answers with it", l.records.Noun)
	case !removed:
		// Its workflow started after all (after the look) and wrote its
		// first step: the request stands.
		l.records.Log.Warn("the "+l.records.Noun+" workflow's start answered an error but it has begun", l.records.Noun, h.ID)
		return nil
	}
	return apperr.New(apperr.Unavailable, "the %s could not be started, so nothing was created; try again", l.records.Noun)
}

// StartWorkflow starts the kind's workflow for the record b heads, with
// input in, exactly once (StartOnce), under the search attributes every
// kind has and extra.
func (l *Lifecycle[T]) StartWorkflow(ctx context.Context, b *models.RequestBase, in any, extra ...temporal.SearchAttributeUpdate) error {
	return StartOnce(ctx, l.records.Temporal, client.StartWorkflowOptions{
		ID:                    l.records.Owner.WorkflowID(b.ID),
		TypedSearchAttributes: Attributes(b.OrganizationID, l.names.Kind, b.Status, b.ExternalID, extra...),
	}, l.names.Workflow, in)
}

// Kind names the kind for the reconciler (requests.Owned).
func (l *Lifecycle[T]) Kind() string { return l.names.Kind }

// InFlow are the organisation's records in flow flowID, oldest first, as
// its evidence export holds them.
func (l *Lifecycle[T]) InFlow(ctx context.Context, orgID, flowID string) ([]T, error) {
	return l.table.InFlow(ctx, orgID, flowID)
}

// AboutReport are the organisation's records about report reportID,
// oldest first, as its evidence export holds them; a kind never about a
// report has none.
func (l *Lifecycle[T]) AboutReport(ctx context.Context, orgID, reportID string) ([]T, error) {
	return l.table.AboutReport(ctx, orgID, reportID)
}

// Get returns one of the organisation's records.
func (l *Lifecycle[T]) Get(ctx context.Context, orgID, id string) (*T, error) {
	return l.table.Get(ctx, orgID, id)
}

// Waiting lists the open records waiting on the person who acts (asked,
// and not yet done what each asks of them), in order, at most limit.
func (l *Lifecycle[T]) Waiting(ctx context.Context, orgID string, who models.Actor, order models.InboxOrder, limit int) ([]T, error) {
	if err := accounts.NeedPerson(who, "an inbox"); err != nil {
		return nil, err
	}
	return l.table.Waiting(ctx, orgID, who.ID, order, limit)
}

// WaitingKeys lists where the open records waiting on the person who acts
// sort, in order, at most limit; Waiting loads the records.
func (l *Lifecycle[T]) WaitingKeys(ctx context.Context, orgID string, who models.Actor, order models.InboxOrder, limit int) ([]models.WaitingKey, error) {
	if err := accounts.NeedPerson(who, "an inbox"); err != nil {
		return nil, err
	}
	return l.table.WaitingKeys(ctx, orgID, who.ID, order, limit)
}

// WaitingCounts counts the open records waiting on the person who acts,
// and those due before dueBefore.
func (l *Lifecycle[T]) WaitingCounts(ctx context.Context, orgID string, who models.Actor, dueBefore time.Time) (models.Counts, error) {
	if err := accounts.NeedPerson(who, "an inbox"); err != nil {
		return models.Counts{}, err
	}
	return l.table.Counts(ctx, orgID, who.ID, dueBefore)
}

// Cancel withdraws an open record; the record remains. The workflow lets
// the requester, owners and administrators do it.
func (l *Lifecycle[T]) Cancel(ctx context.Context, orgID, id, updateID string, who models.Actor) (*T, error) {
	return l.records.Cancel(ctx, orgID, id, updateID, who)
}

// Update sends an Update to the record's workflow and returns the record
// as the workflow left it (see Records.Update).
func (l *Lifecycle[T]) Update(ctx context.Context, orgID, id, updateID, name string, arg workflows.Argument) (*T, error) {
	return l.records.Update(ctx, orgID, id, updateID, name, arg)
}

// StartUnowned starts the workflows of open records no workflow took up
// (see Reconcile).
func (l *Lifecycle[T]) StartUnowned(ctx context.Context, olderThan time.Time, batch int) (int, error) {
	return l.records.StartUnowned(ctx, olderThan, batch)
}

// CheckStatus refuses a list's status filter that names none of the kind's
// states.
func (l *Lifecycle[T]) CheckStatus(status string) error { return CheckStatus(status, l.names.States) }

// List pages through the organisation's requests of the kind, newest
// first, narrowed by f; an externalId finds only who's own.
func (l *Lifecycle[T]) List(ctx context.Context, who models.Actor, f models.Filter, p models.Page) ([]T, string, error) {
	if err := l.CheckStatus(f.Common().Status); err != nil {
		return nil, "", err
	}
	return l.table.List(ctx, who.OrgID(), who.ID, f, p)
}

// RemovePerson takes a person removed from the organisation off each of
// the open records named, with the Update name whose argument arg makes
// from each record. Each Update's id is the person's id after idPrefix, so a retry
// is applied once. A record that needs nothing (settled, or the person no
// longer asked or done acting) is skipped: its workflow refuses with one
// of the codes in done.
func (l *Lifecycle[T]) RemovePerson(ctx context.Context, orgID string, ids []string, personID, name, idPrefix string,
	arg func(rec *T) (workflows.Argument, error), done ...string) error {
	return l.UpdateEach(ctx, orgID, ids, name, idPrefix+"/"+personID, arg, done...)
}

// UpdateEach sends the Update name to each of the open records named,
// with the argument arg makes from the record as read and updateID, so a
// retry is applied once. A record that needs nothing is skipped: it has
// settled, or its workflow refuses with one of the codes in done.
func (l *Lifecycle[T]) UpdateEach(ctx context.Context, orgID string, ids []string, name, updateID string,
	arg func(rec *T) (workflows.Argument, error), done ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if l.records.Temporal == nil {
		return errNoTemporal
	}
	var errs []error
	for _, id := range ids {
		rec, err := l.Get(ctx, orgID, id)
		if err == nil && l.kind.Head(rec).Status != l.records.Open {
			continue
		}
		var a workflows.Argument
		if err == nil {
			a, err = arg(rec)
		}
		if err == nil {
			err = l.records.send(ctx, rec, updateID, name, a)
		}
		if err != nil && slices.ContainsFunc(done, func(code string) bool { return apperr.Is(err, code) }) {
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
