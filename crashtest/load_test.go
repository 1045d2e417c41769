package crashtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Operation kinds the load sends.
const (
	opCreate = "create"
	opDecide = "decide"
	opCancel = "cancel"

	opCreateCollection = "collection create"
	opReply            = "reply"
	opCancelCollection = "collection cancel"

	opCreateReview = "review create"
	opVerdict      = "verdict"
	opCancelReview = "review cancel"
)

// op is one request an agent or a person sends with an Idempotency-Key and
// retries, as a careful client would, until it gets a definitive answer:
// through connection errors, 5xx and 409 idempotency_in_progress.
type op struct {
	kind string
	// method is POST when empty.
	method string
	path   string
	token  string
	key    string
	body   string

	// What the load asked for, to check against the final state.
	approvalID string // for decide and cancel
	deciderID  string
	decision   string
	amount     *float64 // a correction to input.amount

	collectionID string // for reply and collection cancel
	answers      map[string]any

	reportID  string // for report publish
	versionID string // for a held version's release or decline, in decision

	reviewID string // for verdict and review cancel; the verdict is in decision

	gateAmount int // for a gate check and its receipt, input.amount

	checkKey string // for a receipt, its check's key
	mismatch bool   // for a receipt, whether it reports another input

	// status is the definitive answer; 0 when the client gave up.
	status   int
	respBody []byte
	tries    int
	// replayed is whether the definitive answer was a stored replay.
	replayed bool
	// sent is when the first attempt went, answered when the definitive
	// answer came.
	sent, answered time.Time
	// uncertain marks an op a restore may or may not have kept (restoredTo):
	// its status is cleared, so the check holds it to nothing.
	uncertain bool
}

func (o *op) acknowledged() bool { return o.status >= 200 && o.status < 300 }

// request is the approval, collection or review o acts on, if any.
func (o *op) request() string { return cmp.Or(o.approvalID, o.collectionID, o.reviewID) }

// refusedAlone reports whether an op was refused (4xx) with no op of its
// kind by the same person on the same request that may have run (answered
// 2xx, or left unanswered): what the request shows of such an op, the
// refused one did, though a 4xx says nothing was done.
func (l *load) refusedAlone() func(o *op) bool {
	ran := map[[3]string]bool{}
	for _, o := range l.ops {
		if o.acknowledged() || o.status == 0 {
			ran[[3]string{o.kind, o.request(), o.deciderID}] = true
		}
	}
	return func(o *op) bool {
		return o.status >= 400 && o.status < 500 && !ran[[3]string{o.kind, o.request(), o.deciderID}]
	}
}

// created is an approval a 2xx create returned.
type created struct {
	id        string
	key       string
	approvers []string // member ids
	expiresAt time.Time
	callback  bool
}

// load is the mixed load of agents and people, and the ledger of what
// each was told.
type load struct {
	svc      target
	receiver string
	client   *http.Client
	giveUp   time.Duration

	delegations *delegations

	mu        sync.Mutex
	ops       []*op
	approvals []*created
	asked     []*asked
	reports   []string
	// held are the versions a publish was told the scan held that the
	// load has not yet released or declined, oldest first.
	held []string
	// reviewReports are the reports reviews are asked on, shared with
	// everyone so that every member may review them; reviewed the reviews
	// a 2xx create returned.
	reviewReports []string
	reviewed      []*reviewed
	// mandateID is the standing mandate granted before the load;
	// lastMandated when the load last asked about an amount it covers.
	mandateID    string
	lastMandated time.Time
	fiveXX       atomic.Int64
	netErrors    atomic.Int64
	// failures are every 5xx and dropped connection, when and what each
	// was, so a figure that must be 0 says what made it not.
	failuresMu sync.Mutex
	failures   []failure
	// twins counts the requests sent twice at once (sendTwice), and
	// twinMismatches says how each pair answered differently.
	twins          atomic.Int64
	twinMismatches []string
	seq            atomic.Int64
	// longPolls counts the long-polls that returned (the soak's).
	longPolls atomic.Int64
	// patience is how long the requests that do not expire within
	// seconds wait for their people.
	patience time.Duration
}

// person is a member the load decides as.
type person struct{ id, email, token string }

func (l *load) people() []person {
	var out []person
	for _, m := range l.svc.keys().Members {
		if m.Role == "member" {
			out = append(out, person{m.ID, m.Email, m.Token})
		}
	}
	return out
}

// run drives one client until ctx ends: each iteration creates, decides,
// replies to or cancels an approval, a collection or a review, publishes,
// or asks the action gate, chosen by rng.
func (l *load) run(ctx context.Context, rng *rand.Rand) {
	people := l.people()
	for ctx.Err() == nil {
		if rng.IntN(100) < delegationChance || l.delegations.due() {
			l.delegate(rng, people)
		}
		switch p := rng.IntN(100); {
		case p < 17:
			l.create(rng, people)
		case p < 22:
			l.gate(rng, people)
		case p < 38:
			if a := l.pick(rng); a != nil {
				l.decide(rng, a, people)
			}
		case p < 43:
			if a := l.pick(rng); a != nil {
				l.send(&op{kind: opCancel, path: "/api/v1/approvals/" + a.id + "/cancel", token: l.svc.keys().AgentKey,
					key: l.newKey("cancel"), approvalID: a.id})
			}
		case p < 50:
			l.createCollection(rng, people)
		case p < 60:
			l.publish(rng)
		case p < 78:
			if c := l.pickCollection(rng); c != nil {
				l.reply(rng, c, people)
			}
		case p < 82:
			if c := l.pickCollection(rng); c != nil {
				l.send(&op{kind: opCancelCollection, path: "/api/v1/collections/" + c.id + "/cancel", token: l.svc.keys().AgentKey,
					key: l.newKey("colcancel"), collectionID: c.id})
			}
		case p < 88:
			l.createReview(rng, people)
		case p < 98:
			if v := l.pickReview(rng); v != nil {
				l.verdict(rng, v, people)
			}
		default:
			if v := l.pickReview(rng); v != nil {
				l.cancelReview(v)
			}
		}
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
	}
}

func (l *load) newKey(kind string) string { return fmt.Sprintf("%s-%d", kind, l.seq.Add(1)) }

// createRequest sends the agent's create of a request of the kind kind at path
// under Idempotency-Key key, and, once the answer is acknowledged, hands
// keep (under the load's lock) the id of what it made and the answer.
func (l *load) createRequest(kind, path, key string, body map[string]any, keep func(id string, answer []byte)) {
	b, _ := json.Marshal(body)
	o := &op{kind: kind, path: path, token: l.svc.keys().AgentKey, key: key, body: string(b)}
	l.send(o)
	if !o.acknowledged() {
		return
	}
	if id := idOf(o.respBody); id != "" {
		l.mu.Lock()
		defer l.mu.Unlock()
		keep(id, o.respBody)
	}
}

// askSome chooses 1 to all of people to ask, in a random order: their
// addresses for the create and their ids for the check.
func askSome(rng *rand.Rand, people []person) (emails, ids []string) {
	for _, i := range rng.Perm(len(people))[:1+rng.IntN(len(people))] {
		emails = append(emails, people[i].email)
		ids = append(ids, people[i].id)
	}
	return emails, ids
}

// expiry is when a new request expires: after the load's patience, or,
// for short percent of them, within seconds, among the kills.
func (l *load) expiry(rng *rand.Rand, short int) time.Time {
	if rng.IntN(100) < short {
		return time.Now().Add(time.Duration(3+rng.IntN(12)) * time.Second)
	}
	return time.Now().Add(l.patience)
}

// personOf is the one of people whose id is id.
func personOf(people []person, id string) person {
	i := slices.IndexFunc(people, func(p person) bool { return p.id == id })
	if i < 0 {
		return person{}
	}
	return people[i]
}

// oneOf is one of ids' people, at random.
func oneOf(rng *rand.Rand, people []person, ids []string) person {
	return personOf(people, ids[rng.IntN(len(ids))])
}

// recentOf is one of the last n of made, at random, or nil when there is
// none; the caller holds l.mu.
func recentOf[T any](rng *rand.Rand, made []*T, n int) *T {
	if len(made) == 0 {
		return nil
	}
	return made[len(made)-1-rng.IntN(min(len(made), n))]
}

func (l *load) create(rng *rand.Rand, people []person) {
	emails, ids := askSome(rng, people)
	expires := l.expiry(rng, 25)
	key := l.newKey("create")
	body := map[string]any{"title": "Pay invoice " + key, "risk": "low", "approvers": emails, "externalId": key,
		"expiresAt": expires.UTC().Format(time.RFC3339), "input": map[string]any{"amount": 100}, "editableFields": []string{"amount"}}
	callback := rng.IntN(100) < 30
	if callback {
		body["callbackUrl"] = l.receiver + "/callback"
	}
	b, _ := json.Marshal(body)
	o := &op{kind: opCreate, path: "/api/v1/approvals", token: l.svc.keys().AgentKey, key: key, body: string(b)}
	if rng.IntN(8) == 0 {
		l.sendTwice(o)
	} else {
		l.send(o)
	}
	if !o.acknowledged() {
		return
	}
	var got struct {
		ID        string    `json:"id"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	if json.Unmarshal(o.respBody, &got) == nil {
		l.mu.Lock()
		l.approvals = append(l.approvals, &created{id: got.ID, key: key, approvers: ids, expiresAt: got.ExpiresAt, callback: callback})
		l.mu.Unlock()
	}
}

// pick returns a recent approval, most likely still pending.
func (l *load) pick(rng *rand.Rand) *created {
	l.mu.Lock()
	defer l.mu.Unlock()
	return recentOf(rng, l.approvals, 40)
}

func (l *load) decide(rng *rand.Rand, a *created, people []person) {
	who := oneOf(rng, people, a.approvers)
	// Someone away may be stood in for, once the hand-over reached this
	// approval (until then the stand-in is refused not_an_approver).
	if in, ok := l.delegations.standIn(who.id); ok && rng.IntN(2) == 0 {
		who = in
	}
	o := &op{kind: opDecide, path: "/api/v1/approvals/" + a.id + "/decision", token: who.token, key: l.newKey("decide"),
		approvalID: a.id, deciderID: who.id, decision: "approve"}
	body := map[string]any{"decision": "approve"}
	switch r := rng.IntN(100); {
	case r < 30:
		o.decision = "reject"
		body = map[string]any{"decision": "reject", "reason": "not this month"}
	case r < 65:
		amount := float64(50 + rng.IntN(50))
		o.amount = &amount
		body["corrections"] = map[string]any{"amount": amount}
	}
	b, _ := json.Marshal(body)
	o.body = string(b)
	l.send(o)
}

// send posts o until a definitive answer or giveUp, and records it.
func (l *load) send(o *op) {
	l.answer(o)
	l.record(o)
}

// sendTwice sends o twice at once under its key, as an agent that gave up
// on an attempt too soon may, and records the first; the other must be
// answered alike: the same status, for the same record.
func (l *load) sendTwice(o *op) {
	twin := &op{kind: o.kind, path: o.path, token: o.token, key: o.key, body: o.body}
	done := make(chan struct{})
	go func() { defer close(done); l.answer(twin) }()
	l.send(o)
	<-done
	if twin.status != o.status || idOf(twin.respBody) != idOf(o.respBody) || checkOf(twin.respBody) != checkOf(o.respBody) {
		l.mu.Lock()
		l.twinMismatches = append(l.twinMismatches, fmt.Sprintf("%s %s answered %d (%s) and, sent at once, %d (%s)",
			o.kind, o.key, o.status, o.respBody, twin.status, twin.respBody))
		l.mu.Unlock()
	}
	l.twins.Add(1)
}

// checkOf is the gate check a gate's answer names, if any.
func checkOf(body []byte) string {
	var v struct {
		CheckID string `json:"checkId"`
	}
	_ = json.Unmarshal(body, &v)
	return v.CheckID
}

// failure is a 5xx or a dropped connection the load met: when, the
// status (0 for a dropped connection), and what.
type failure struct {
	at     time.Time
	status int
	what   string
}

func (l *load) failed(status int, what string) {
	l.failuresMu.Lock()
	defer l.failuresMu.Unlock()
	l.failures = append(l.failures, failure{time.Now(), status, what})
}

// serverErrors are the 5xx answers other than 502 and 503 (a proxy with
// no process behind it, or Assent's "try again"), which no kill excuses:
// what each said.
func (l *load) serverErrors() []string {
	l.failuresMu.Lock()
	defer l.failuresMu.Unlock()
	var out []string
	for _, f := range l.failures {
		if f.status != 0 && f.status != http.StatusBadGateway && f.status != http.StatusServiceUnavailable {
			out = append(out, f.what)
		}
	}
	return out
}

// failuresWhere are the failures match holds, each with its time.
func (l *load) failuresWhere(match func(failure) bool) []string {
	l.failuresMu.Lock()
	defer l.failuresMu.Unlock()
	var out []string
	for _, f := range l.failures {
		if match(f) {
			out = append(out, f.at.UTC().Format("15:04:05.000")+" "+f.what)
		}
	}
	return out
}

// answer posts o until a definitive answer or giveUp.
func (l *load) answer(o *op) {
	o.sent = time.Now()
	deadline := o.sent.Add(l.giveUp)
	for time.Now().Before(deadline) {
		o.tries++
		status, body, replayed, err := l.post(o)
		switch {
		case err != nil:
			l.netErrors.Add(1)
			l.failed(0, fmt.Sprintf("%s %s: %v", o.kind, o.key, err))
		case status >= 500:
			l.fiveXX.Add(1)
			l.failed(status, fmt.Sprintf("%s %s answered %d: %.300s", o.kind, o.key, status, body))
		case status == http.StatusConflict && strings.Contains(string(body), "idempotency_in_progress"):
		default:
			o.status, o.respBody, o.replayed = status, body, replayed
			o.answered = time.Now()
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (l *load) post(o *op) (int, []byte, bool, error) {
	method := o.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, l.svc.url(o.path), bytes.NewReader([]byte(o.body)))
	if err != nil {
		return 0, nil, false, err
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", o.key)
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil, false, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Get("Idempotency-Replayed") == "true", err
}

func (l *load) record(o *op) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, o)
}

// get reads path with the agent key into out.
func (l *load) get(path string, out any) error { return l.getAs(l.svc.keys().AgentKey, path, out) }

// getAs reads path with token into out.
func (l *load) getAs(token, path string, out any) error {
	req, _ := http.NewRequest(http.MethodGet, l.svc.url(path), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
