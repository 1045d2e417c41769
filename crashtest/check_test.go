package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/payloadcodec"
)

// approval is what the check reads of an approval.
type approval struct {
	ID            string          `json:"id"`
	Status        string          `json:"status"`
	ExternalID    string          `json:"externalId"`
	ExpiresAt     time.Time       `json:"expiresAt"`
	DecidedByID   *string         `json:"decidedById"`
	ApprovedInput json.RawMessage `json:"approvedInput"`
	CallbackURL   *string         `json:"callbackUrl"`
	// Action names the registered action when the gate raised it.
	Action *string `json:"action"`
	// ResolvedApprovers are who may decide it now: those it named, and
	// who stands in for those away.
	ResolvedApprovers []struct {
		ID string `json:"id"`
	} `json:"resolvedApprovers"`
}

// report holds every figure of one run; the goal is zero for each
// figure from ServerErrors on.
type report struct {
	Seed  uint64 `json:"seed"`
	Kills int    `json:"kills"`
	// KillsOf counts the kills by process (and PostgreSQL's restarts).
	KillsOf map[string]int `json:"killsOf"`
	// ExitedOnTheirOwn counts, by process, the cluster's processes that
	// exited unbidden and were started again by the supervisor, as an
	// orchestrator would; Assent's own must have none.
	ExitedOnTheirOwn map[string]int `json:"exitedOnTheirOwn,omitempty"`
	Ops              map[string]int `json:"acknowledgedOps"`
	Tries            int            `json:"tries"`
	NetErrors        int64          `json:"connectionErrors"`
	FiveXX           int64          `json:"responses5xx"`
	Approvals        int            `json:"approvals"`
	// Collections, the replies they hold, and collections reminded.
	Collections   int `json:"collections"`
	RepliesStored int `json:"repliesStored"`
	Reminders     int `json:"collectionsReminded"`
	// Reviews, the verdicts they hold, how many ended in each status, and
	// the verdicts refused, by error code.
	Reviews         int            `json:"reviews"`
	VerdictsStored  int            `json:"verdictsStored"`
	ReviewOutcomes  map[string]int `json:"reviewOutcomes"`
	VerdictsRefused map[string]int `json:"verdictsRefused"`
	// Reports, their versions, the versions held by the scan and still
	// waiting, and those an administrator released or declined.
	Reports      int `json:"reports"`
	Versions     int `json:"versions"`
	Held         int `json:"heldVersions"`
	HeldReleased int `json:"heldReleased"`
	HeldDeclined int `json:"heldDeclined"`
	Sends        int `json:"reportSends"`
	Events       int `json:"eventsReceived"`
	AuditEntries int `json:"auditEntries"`
	OutboxEvents int `json:"outboxEvents"`
	// What the gate answered, by decision, the checks sent more than once
	// before their answer (a kill or a 409 in the way), the stored answers
	// the check marked unfinished to replay them as resumed, the checks stored,
	// the approvals the gate raised and how they ended, and the
	// gate.denied events received.
	GateAnswers          map[string]int `json:"gateAnswers"`
	GateRetried          int            `json:"gateChecksRetried"`
	GateResumed          int            `json:"gateClaimsResumed"`
	GateChecksStored     int            `json:"gateChecksStored"`
	GateApprovals        int            `json:"gateApprovals"`
	GateApprovalOutcomes map[string]int `json:"gateApprovalOutcomes"`
	GateDeniedReceived   int            `json:"gateDeniedReceived"`
	// The checks the standing mandate allowed, and the receipts stored and
	// posted by a client that gave up before its answer.
	MandateUses        int `json:"mandateUses"`
	ReceiptsStored     int `json:"receiptsStored"`
	ReceiptsUnanswered int `json:"receiptsUnanswered"`

	// ServerErrors are the 5xx answers other than 502 and 503 (counted in
	// FiveXX with those).
	ServerErrors int `json:"serverErrors"`
	// Twins are the requests sent twice at once under one key;
	// TwinMismatches those whose two answers differ.
	Twins          int `json:"sentTwiceAtOnce"`
	TwinMismatches int `json:"twinMismatches"`
	// RefusedButDone are approval creates, decisions and cancellations
	// answered 4xx, which says nothing was done, that took effect all the
	// same: a create's key made an approval, a decision decided it, a
	// cancellation cancelled it.
	RefusedButDone int `json:"refusedButDone"`
	// Away is how many members were away when the load stopped;
	// NotHandedOver the pending approvals asking one of them but not who
	// stands in for them.
	Away                int `json:"awayAtEnd"`
	NotHandedOver       int `json:"notHandedOver"`
	Lost                int `json:"lost"`
	Duplicates          int `json:"duplicates"`
	Divergences         int `json:"divergences"`
	Unacknowledged      int `json:"unacknowledged"`
	ActionsNotReflected int `json:"actionsNotReflected"`
	PendingPastExpiry   int `json:"pendingPastExpiry"`
	MissingEvents       int `json:"missingEvents"`
	SplitDeliveries     int `json:"splitDeliveries"`
	UnexpectedEvents    int `json:"unexpectedEvents"`
	ReplayMismatches    int `json:"replayMismatches"`
	// CompletionMismatches are collections complete without their
	// required replies, or open, expired or cancelled with them, and
	// reviews whose status does not follow from their verdicts.
	CompletionMismatches int `json:"completionMismatches"`
	// OutboxMismatches are requests whose outbox events are not exactly
	// those their final state implies, each once.
	OutboxMismatches int `json:"outboxMismatches"`
	// AuditGaps are requests whose audit seqs are not 1 to their last
	// transition.
	AuditGaps      int `json:"auditGaps"`
	RemindersWrong int `json:"remindersWrong"`
	// RequestRowsOutOfStep are requests whose row in the requests table
	// is missing or not their record's kind, status and transition, and
	// rows without a record.
	RequestRowsOutOfStep int `json:"requestRowsOutOfStep"`
	// GateMismatches are gate answers that do not follow the policy, or
	// that the check recorded, its key's claim or the approval raised
	// contradict.
	GateMismatches int `json:"gateMismatches"`
	// ReceiptMismatches are receipts answered other than their input
	// implies.
	ReceiptMismatches int `json:"receiptMismatches"`

	// Upgrade is what the rolling upgrade from the previous release
	// measured, Restore what the restore drill did (TestClusterCrashSafety).
	Upgrade *upgradeFigures `json:"upgrade,omitempty"`
	Restore *restoreFigures `json:"restore,omitempty"`

	// Seconds each phase of the check took, to keep the run short.
	Phases map[string]float64 `json:"checkSeconds"`

	// Problems names each failure found, for the test log.
	Problems []string `json:"problems,omitempty"`
}

// phase records the seconds since *since under name and restarts the clock.
func (r *report) phase(name string, since *time.Time) {
	if r.Phases == nil {
		r.Phases = map[string]float64{}
	}
	r.Phases[name] = time.Since(*since).Round(100 * time.Millisecond).Seconds()
	*since = time.Now()
}

// owedEvents are the events one request's final state implies: kinds to
// the webhook, and those of them its kind sends to a callback when it has
// one.
type owedEvents struct {
	id, requestType string
	kinds           []string
	callback        bool
}

// awaitEvents waits up to rcv.wait for every owed event to reach the receiver
// and counts each that never did.
func awaitEvents(ctx context.Context, rcv *receiver, owed []owedEvents, r *report) {
	missing := func() (out [][3]string) {
		got := rcv.deliveries()
		for _, o := range owed {
			for _, kind := range o.kinds {
				if len(got[[3]string{"webhook", o.id, kind}]) == 0 {
					out = append(out, [3]string{"webhook", o.id, kind})
				}
				if o.callback && events.IsCallbackEvent(o.requestType, kind) && len(got[[3]string{"callback", o.id, kind}]) == 0 {
					out = append(out, [3]string{"callback", o.id, kind})
				}
			}
		}
		return out
	}
	wait, cancel := context.WithTimeout(ctx, rcv.wait)
	defer cancel()
	waitUntil(wait, func() bool { return len(missing()) == 0 })
	for _, m := range missing() {
		r.problem(&r.MissingEvents, "%s never received %s for %s", m[0], m[2], m[1])
	}
}

func (r *report) problem(counter *int, format string, args ...any) {
	*counter++
	if len(r.Problems) < 50 {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// list reads every approval of the organisation.
func (l *load) list() ([]approval, error) { return listAll[approval](l, "/api/v1/approvals") }

// requestHead is what the check reads of every kind of request but
// approvals (whose record it reads whole).
type requestHead struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	ExternalID  string     `json:"externalId"`
	ExpiresAt   time.Time  `json:"expiresAt"`
	SettledAt   *time.Time `json:"settledAt"`
	CallbackURL *string    `json:"callbackUrl"`
}

// settle waits for every request at path past its expiry to expire,
// counts those that did not, cancels what is still open (cancel names
// the operation for an id) and reads them all once more.
func settle[T any](ctx context.Context, l *load, r *report, path string, head func(T) requestHead, cancel func(id string) *op) ([]T, error) {
	var all []T
	var err error
	overdue := func(rec T) bool {
		h := head(rec)
		return h.Status == "open" && time.Now().After(h.ExpiresAt.Add(2*time.Second))
	}
	wait, stop := context.WithTimeout(ctx, 90*time.Second)
	defer stop()
	waitUntil(wait, func() bool {
		if all, err = listAll[T](l, path); err != nil {
			return false
		}
		return !slices.ContainsFunc(all, overdue)
	})
	if err != nil {
		return nil, err
	}
	for _, rec := range all {
		if h := head(rec); overdue(rec) {
			r.problem(&r.PendingPastExpiry, "%s still open %s after its expiry", h.ID, time.Since(h.ExpiresAt).Round(time.Second))
		}
	}
	for _, rec := range all {
		if h := head(rec); h.Status == "open" {
			o := cancel(h.ID)
			o.path, o.token, o.key, o.body = path+"/"+h.ID+"/cancel", l.svc.keys().AgentKey, "drain-"+h.ID, "{}"
			l.send(o)
		}
	}
	return listAll[T](l, path)
}

// listAll reads every page of the organisation's records at path.
func listAll[T any](l *load, path string) ([]T, error) {
	var all []T
	cursor := ""
	for {
		var page struct {
			Data       []T     `json:"data"`
			NextCursor *string `json:"nextCursor"`
		}
		q := "?limit=200"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := l.get(path+q, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil {
			return all, nil
		}
		cursor = *page.NextCursor
	}
}

// settle waits for every request past its expiry to expire, counts those
// that did not, and cancels what is still pending so that every workflow
// ends.
func (l *load) settle(ctx context.Context, r *report) ([]approval, error) {
	var all []approval
	var err error
	overdue := func() int {
		if all, err = l.list(); err != nil {
			return -1
		}
		n := 0
		for _, a := range all {
			if a.Status == "pending" && time.Now().After(a.ExpiresAt.Add(2*time.Second)) {
				n++
			}
		}
		return n
	}
	wait, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	waitUntil(wait, func() bool { return overdue() == 0 })
	if err != nil {
		return nil, err
	}
	for _, a := range all {
		if a.Status == "pending" && time.Now().After(a.ExpiresAt.Add(2*time.Second)) {
			r.problem(&r.PendingPastExpiry, "%s still pending %s after its expiry", a.ID, time.Since(a.ExpiresAt).Round(time.Second))
		}
	}
	if err := l.checkHandedOver(ctx, r); err != nil {
		return nil, err
	}
	for _, a := range all {
		if a.Status == "pending" {
			l.send(&op{kind: opCancel, path: "/api/v1/approvals/" + a.ID + "/cancel", token: l.svc.keys().AgentKey, key: "drain-" + a.ID,
				approvalID: a.ID, body: "{}"})
		}
	}
	return l.list()
}

// expected is the event kinds the final status implies (a cancellation
// emits none).
func expected(status string) []string {
	out := []string{events.ApprovalRequested}
	switch status {
	case "approved":
		out = append(out, events.ApprovalApproved)
	case "rejected":
		out = append(out, events.ApprovalRejected)
	case "expired":
		out = append(out, events.ApprovalExpired)
	}
	return out
}

// terminal are the events that settle an approval; at most one may arrive.
var terminal = []string{events.ApprovalApproved, events.ApprovalRejected, events.ApprovalExpired}

// check compares what each client was told with the final state of the
// database, of Temporal and of the receiver.
func (l *load) check(ctx context.Context, rcv *receiver, r *report) error {
	clock := time.Now()
	all, err := l.settle(ctx, r)
	r.phase("approvals settled", &clock)
	if err != nil {
		return err
	}
	r.Approvals = len(all)
	byID := map[string]approval{}
	byKey := map[string][]approval{}
	for _, a := range all {
		byID[a.ID] = a
		byKey[a.ExternalID] = append(byKey[a.ExternalID], a)
	}

	// Every event the final state implies, under one delivery id each.
	owed := make([]owedEvents, len(all))
	for i, a := range all {
		owed[i] = owedEvents{id: a.ID, requestType: events.RequestApproval, kinds: expected(a.Status), callback: a.CallbackURL != nil}
	}
	awaitEvents(ctx, rcv, owed, r)
	got := rcv.deliveries()
	for _, a := range all {
		for _, kind := range terminal {
			if len(got[[3]string{"webhook", a.ID, kind}]) > 0 && !slices.Contains(expected(a.Status), kind) {
				r.problem(&r.UnexpectedEvents, "%s is %s but the receiver got %s", a.ID, a.Status, kind)
			}
		}
	}

	// Creates: one approval per key, the one the client was given.
	r.Ops = map[string]int{}
	for _, o := range l.ops {
		r.Tries += o.tries
		if o.acknowledged() && o.kind != opGate && o.kind != opReceipt { // checkGate counts the gate's answers and receipts, 403 and 409 included
			r.Ops[o.kind]++
		} else if o.status == 0 && !o.uncertain {
			r.problem(&r.Unacknowledged, "%s %s got no answer in %s", o.kind, o.key, l.giveUp)
		}
		if o.kind != opCreate {
			continue
		}
		made := byKey[o.key]
		if len(made) > 1 {
			r.problem(&r.Duplicates, "key %s made %d approvals", o.key, len(made))
		}
		if o.acknowledged() {
			var resp approval
			_ = json.Unmarshal(o.respBody, &resp)
			if len(made) == 0 || byID[resp.ID].ID == "" {
				r.problem(&r.Lost, "key %s was answered %d with %s, which does not exist", o.key, o.status, resp.ID)
			}
		}
		if o.status >= 400 && o.status < 500 && len(made) > 0 {
			r.problem(&r.RefusedButDone, "key %s was refused %d (%.200s) yet made %s", o.key, o.status, o.respBody, made[0].ID)
		}
	}

	// Decisions and cancellations answered 2xx took effect as sent.
	for _, o := range l.ops {
		if !o.acknowledged() || (o.kind != opDecide && o.kind != opCancel) {
			continue
		}
		a := byID[o.approvalID]
		ok := true
		switch {
		case o.kind == opCancel:
			ok = a.Status == "cancelled"
		case o.decision == "reject":
			ok = a.Status == "rejected" && a.DecidedByID != nil && *a.DecidedByID == o.deciderID
		default:
			ok = a.Status == "approved" && a.DecidedByID != nil && *a.DecidedByID == o.deciderID
			if ok && o.amount != nil {
				var in struct{ Amount float64 }
				ok = json.Unmarshal(a.ApprovedInput, &in) == nil && in.Amount == *o.amount
			}
		}
		if !ok {
			r.problem(&r.ActionsNotReflected, "%s %s by %s on %s answered %d but the approval is %s", o.kind, o.decision, o.deciderID,
				o.approvalID, o.status, a.Status)
		}
	}

	// A decision or cancellation refused (4xx) changed nothing: an
	// approval decided by someone, or cancelled, with none of the
	// decisions (cancellations) on it that may have run answered 2xx or
	// left unanswered, was changed by a refused one.
	refused := l.refusedAlone()
	for _, o := range l.ops {
		if (o.kind != opDecide && o.kind != opCancel) || !refused(o) {
			continue
		}
		a := byID[o.approvalID]
		if (o.kind == opCancel && a.Status == "cancelled") || (o.kind == opDecide && a.DecidedByID != nil && *a.DecidedByID == o.deciderID) {
			r.problem(&r.RefusedButDone, "%s by %q on %s was refused %d (%.200s) yet the approval is %s by it", o.kind, o.deciderID,
				o.approvalID, o.status, o.respBody, a.Status)
		}
	}

	// The read model says what the workflow did.
	// Workflow results are sealed with the service's key.
	opts, keys, err := l.svc.temporal()
	if err != nil {
		return err
	}
	codec := payloadcodec.New(keys)
	opts.DataConverter, opts.FailureConverter = payloadcodec.DataConverter(codec), payloadcodec.FailureConverter(codec)
	opts.Logger = sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tc, err := client.Dial(opts)
	if err != nil {
		return err
	}
	defer tc.Close()
	// A workflow may end a minute after its request settled: it first
	// waits for the cancellation of an email attempt the kill cut off.
	r.phase("approval events and creates", &clock)
	wctx, cancelAll := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelAll()
	for _, a := range all {
		var state struct{ Status string }
		err := tc.GetWorkflow(wctx, "approval/"+a.ID, "").Get(wctx, &state)
		if err != nil || state.Status != a.Status {
			r.problem(&r.Divergences, "%s reads %s but its workflow says %q (%v)", a.ID, a.Status, state.Status, err)
		}
	}

	r.phase("approval workflows ended", &clock)
	cols, err := l.checkCollections(ctx, rcv, tc, r)
	r.phase("collections", &clock)
	if err != nil {
		return err
	}
	revs, err := l.checkReviews(ctx, rcv, tc, r)
	r.phase("reviews", &clock)
	if err != nil {
		return err
	}
	if err := l.checkReports(ctx, rcv, tc, r); err != nil {
		return err
	}
	r.phase("reports", &clock)
	if err := l.checkGate(ctx, rcv, all, r); err != nil {
		return err
	}
	r.phase("gate", &clock)
	rcv.mu.Lock()
	r.Events = len(rcv.receipts)
	rcv.mu.Unlock()
	for k, ids := range rcv.deliveries() {
		if len(ids) > 1 {
			r.problem(&r.SplitDeliveries, "%s got %s for %s under %d delivery ids", k[0], k[2], k[1], len(ids))
		}
	}
	if err := l.checkRecords(all, cols, revs, r); err != nil {
		return err
	}

	r.phase("audit and outbox", &clock)
	// Every acknowledged request, sent again, answers as it did.
	for _, o := range l.ops {
		if !o.acknowledged() || o.kind == opGate || o.kind == opReceipt { // checkGate replays the gate's and receipts
			continue
		}
		if o.method != "" {
			continue // a delegation's PUT and DELETE: sent again, they would set or end it again
		}
		again := &op{kind: o.kind, path: o.path, token: o.token, key: o.key, body: o.body}
		l.send(again)
		creates := o.kind == opCreate || o.kind == opCreateCollection || o.kind == opCreateReview || o.kind == opCreateReport || o.kind == opPublishVersion
		if again.status != o.status || (creates && idOf(again.respBody) != idOf(o.respBody)) || versionOf(again.respBody) != versionOf(o.respBody) {
			r.problem(&r.ReplayMismatches, "%s %s answered %d (%s) then %d (%s)", o.kind, o.key, o.status, idOf(o.respBody),
				again.status, idOf(again.respBody))
		}
	}
	r.phase("replays", &clock)
	r.NetErrors, r.FiveXX = l.netErrors.Load(), l.fiveXX.Load()
	for _, e := range l.serverErrors() {
		r.problem(&r.ServerErrors, "%s", e)
	}
	r.Twins = int(l.twins.Load())
	l.mu.Lock()
	for _, e := range l.twinMismatches {
		r.problem(&r.TwinMismatches, "%s", e)
	}
	l.mu.Unlock()
	return nil
}

// versionOf is the id of the version a publish's answer names, if any.
func versionOf(body []byte) string {
	var v struct{ Version struct{ ID string } }
	_ = json.Unmarshal(body, &v)
	return v.Version.ID
}

func idOf(body []byte) string {
	var v struct{ ID string }
	_ = json.Unmarshal(body, &v)
	return v.ID
}
