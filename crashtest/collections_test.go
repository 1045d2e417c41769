package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/events"
)

// asked is a collection a 2xx create returned.
type asked struct {
	id          string
	respondents []string // member ids
}

// collectionQuestions are asked by every collection of the load: a number,
// a choice, a boolean and an optional text, so that replies carry typed
// answers the check can compare.
var collectionQuestions = []map[string]any{
	{"id": "budget", "prompt": "Budget", "kind": "number"},
	{"id": "vendor", "prompt": "Vendor", "kind": "choice", "options": []string{"Acme", "Globex", "Initech"}},
	{"id": "urgent", "prompt": "Urgent?", "kind": "boolean"},
	{"id": "note", "prompt": "Anything else", "kind": "text", "required": false},
}

func (l *load) createCollection(rng *rand.Rand, people []person) {
	emails, ids := askSome(rng, people)
	now := time.Now()
	expires := l.expiry(rng, 25)
	key := l.newKey("collection")
	body := map[string]any{"title": "Quarterly budget " + key, "questions": collectionQuestions, "respondents": emails,
		"requiredResponses": 1 + rng.IntN(len(ids)), "externalId": key, "expiresAt": expires.UTC().Format(time.RFC3339)}
	// A due time a few seconds out puts the one reminder (halfway to it)
	// inside the run, among the kills.
	if due := now.Add(time.Duration(4+rng.IntN(12)) * time.Second); rng.IntN(100) < 40 && due.Before(expires) {
		body["dueAt"] = due.UTC().Format(time.RFC3339)
	}
	if rng.IntN(100) < 30 {
		body["callbackUrl"] = l.receiver + "/callback"
	}
	l.createRequest(opCreateCollection, "/api/v1/collections", key, body, func(id string, _ []byte) {
		l.asked = append(l.asked, &asked{id: id, respondents: ids})
	})
}

// pickCollection returns a recent collection, most likely still open.
func (l *load) pickCollection(rng *rand.Rand) *asked {
	l.mu.Lock()
	defer l.mu.Unlock()
	return recentOf(rng, l.asked, 40)
}

// reply submits one respondent's typed answers.
func (l *load) reply(rng *rand.Rand, c *asked, people []person) {
	who := oneOf(rng, people, c.respondents)
	answers := map[string]any{"budget": 1000 + rng.IntN(9000), "vendor": []string{"Acme", "Globex", "Initech"}[rng.IntN(3)],
		"urgent": rng.IntN(2) == 0}
	if rng.IntN(2) == 0 {
		answers["note"] = "from " + who.email
	}
	b, _ := json.Marshal(map[string]any{"answers": answers, "submit": true})
	l.send(&op{kind: opReply, path: "/api/v1/collections/" + c.id + "/replies", token: who.token, key: l.newKey("reply"),
		body: string(b), collectionID: c.id, deciderID: who.id, answers: answers})
}

// collection is what the check reads of a collection.
type collection struct {
	requestHead
	RequiredResponses int        `json:"requiredResponses"`
	ResponsesSoFar    int        `json:"responsesSoFar"`
	CreatedAt         time.Time  `json:"createdAt"`
	DueAt             *time.Time `json:"dueAt"`
	Replies           []reply    `json:"replies"`

	// reminderDue is when its workflow's reminder timer was set to fire,
	// read from the workflow's history: the workflow measures it from its
	// first task, which a kill may delay past the workflow's start, as
	// the reconciler may delay the start past the record's creation.
	reminderDue time.Time
}

// reply is one reply a collection holds.
type reply struct {
	Respondent struct {
		ID string `json:"id"`
	} `json:"respondent"`
	Answers    map[string]json.RawMessage `json:"answers"`
	OnBehalfOf *delegator                 `json:"onBehalfOf"`
}

// firstTimerDue is when the first timer of a workflow's history was set to
// fire (a collection's reminder comes before its expiry), or zero.
func firstTimerDue(ctx context.Context, tc client.Client, workflowID string) time.Time {
	it := tc.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return time.Time{}
		}
		if a := e.GetTimerStartedEventAttributes(); a != nil {
			return e.GetEventTime().AsTime().Add(a.GetStartToFireTimeout().AsDuration())
		}
	}
	return time.Time{}
}

// repliesBy counts the submitted replies of personID.
func (c *collection) repliesBy(personID string) int {
	n := 0
	for _, r := range c.Replies {
		if r.Respondent.ID == personID {
			n++
		}
	}
	return n
}

// repliedAs reports whether a reply counts as one of voices.
func (c *collection) repliedAs(voices []string) bool {
	return slices.ContainsFunc(c.Replies, func(r reply) bool { return slices.Contains(voices, voiceOf(r.Respondent.ID, r.OnBehalfOf)) })
}

// expectedCollection is the event kinds the final status of a collection
// implies (a cancellation emits none).
func expectedCollection(status string) []string {
	out := []string{events.CollectionRequested}
	switch status {
	case "complete":
		out = append(out, events.CollectionCompleted)
	case "expired":
		out = append(out, events.CollectionExpired)
	}
	return out
}

// checkCollections compares what agents and respondents were told with the
// final collections, their workflows and the receiver. It runs once
// checkApprovals has settled the approvals and their events.
func (l *load) checkCollections(ctx context.Context, rcv *receiver, tc client.Client, r *report) ([]collection, error) {
	all, err := settle(ctx, l, r, "/api/v1/collections", func(c collection) requestHead { return c.requestHead },
		func(id string) *op { return &op{kind: opCancelCollection, collectionID: id} })
	if err != nil {
		return nil, err
	}
	r.Collections = len(all)
	byID := map[string]collection{}
	byKey := map[string][]collection{}
	for _, c := range all {
		byID[c.ID] = c
		byKey[c.ExternalID] = append(byKey[c.ExternalID], c)
		r.RepliesStored += len(c.Replies)
	}

	// Every event the final state implies, under one delivery id each; a
	// webhook endpoint subscribed to nothing in particular gets every kind.
	owed := make([]owedEvents, len(all))
	for i, c := range all {
		owed[i] = owedEvents{id: c.ID, requestType: events.RequestCollection, kinds: expectedCollection(c.Status), callback: c.CallbackURL != nil}
	}
	awaitEvents(ctx, rcv, owed, r)
	got := rcv.deliveries()
	for _, c := range all {
		for _, target := range []string{"webhook", "callback"} {
			for _, kind := range []string{events.CollectionCompleted, events.CollectionExpired} {
				if len(got[[3]string{target, c.ID, kind}]) > 0 && !slices.Contains(expectedCollection(c.Status), kind) {
					r.problem(&r.UnexpectedEvents, "%s is %s but the %s got %s", c.ID, c.Status, target, kind)
				}
			}
		}
	}

	// Complete exactly when the submitted replies reached requiredResponses,
	// each respondent at most once.
	for _, c := range all {
		complete := len(c.Replies) >= c.RequiredResponses
		if (c.Status == "complete") != complete || len(c.Replies) > c.RequiredResponses || c.ResponsesSoFar != len(c.Replies) {
			r.problem(&r.CompletionMismatches, "%s is %s with %d replies (responsesSoFar %d) of %d required", c.ID, c.Status,
				len(c.Replies), c.ResponsesSoFar, c.RequiredResponses)
		}
		for _, rep := range c.Replies {
			if n := c.repliesBy(rep.Respondent.ID); n > 1 {
				r.problem(&r.Duplicates, "%s holds %d replies by %s", c.ID, n, rep.Respondent.ID)
				break
			}
		}
	}

	// Creates: one collection per key, the one the agent was given. Replies
	// and cancellations answered 2xx took effect as sent; a reply refused
	// as already submitted has a stored reply by that person. Anything else
	// refused (4xx) changed nothing: no collection for its key, no reply
	// by that person with its answers, no cancellation, unless one of
	// theirs that may have run (answered 2xx, or unanswered) did it.
	refused := l.refusedAlone()
	for _, o := range l.ops {
		switch o.kind {
		case opCreateCollection:
			made := byKey[o.key]
			if len(made) > 1 {
				r.problem(&r.Duplicates, "key %s made %d collections", o.key, len(made))
			}
			if o.status >= 400 && o.status < 500 && len(made) > 0 {
				r.problem(&r.RefusedButDone, "collection key %s was refused %d (%.200s) yet made %s", o.key, o.status, o.respBody, made[0].ID)
			}
			if o.acknowledged() && (len(made) == 0 || byID[idOf(o.respBody)].ID == "") {
				r.problem(&r.Lost, "key %s was answered %d with %s, which does not exist", o.key, o.status, idOf(o.respBody))
			}
		case opCancelCollection:
			if c := byID[o.collectionID]; o.acknowledged() && c.Status != "cancelled" {
				r.problem(&r.ActionsNotReflected, "cancel %s of %s answered %d but the collection is %s", o.key, o.collectionID, o.status, c.Status)
			} else if refused(o) && c.Status == "cancelled" {
				r.problem(&r.RefusedButDone, "cancel %s of %s was refused %d (%.200s) yet the collection is cancelled", o.key, o.collectionID, o.status, o.respBody)
			}
		case opReply:
			c := byID[o.collectionID]
			switch {
			case o.acknowledged():
				if !c.holds(o.deciderID, o.answers) {
					r.problem(&r.ActionsNotReflected, "reply %s by %s to %s answered %d but the collection (%s) does not hold it once",
						o.key, o.deciderID, o.collectionID, o.status, c.Status)
				}
			case o.status == http.StatusConflict && strings.Contains(string(o.respBody), "already_submitted"):
				// By them, or by or for whom they act with.
				if c.repliesBy(o.deciderID) > 1 || !c.repliedAs(l.delegations.voices(o.deciderID)) {
					r.problem(&r.ActionsNotReflected, "reply %s by %s to %s was refused as already submitted but the collection holds %d of theirs and none for them",
						o.key, o.deciderID, o.collectionID, c.repliesBy(o.deciderID))
				}
			case refused(o) && c.holds(o.deciderID, o.answers):
				r.problem(&r.RefusedButDone, "reply %s by %s to %s was refused %d (%.200s) yet the collection holds it",
					o.key, o.deciderID, o.collectionID, o.status, o.respBody)
			}
		}
	}

	// The read model says what the workflow did.
	wctx, cancelAll := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelAll()
	for i, c := range all {
		all[i].reminderDue = firstTimerDue(wctx, tc, collections.WorkflowID(c.ID))
		var state collections.State
		err := tc.GetWorkflow(wctx, collections.WorkflowID(c.ID), "").Get(wctx, &state)
		if err != nil || state.Status != c.Status || len(state.Replies) != len(c.Replies) {
			r.problem(&r.Divergences, "%s reads %s with %d replies but its workflow says %q with %d (%v)", c.ID, c.Status,
				len(c.Replies), state.Status, len(state.Replies), err)
		}
	}
	return all, nil
}

// holds reports whether c holds exactly one reply by personID, with the
// answers sent (compared as JSON values: numbers come back typed).
func (c *collection) holds(personID string, sent map[string]any) bool {
	if c.repliesBy(personID) != 1 {
		return false
	}
	for _, rep := range c.Replies {
		if rep.Respondent.ID != personID {
			continue
		}
		for q, v := range sent {
			want, _ := json.Marshal(v)
			if !sameJSON(want, rep.Answers[q]) {
				return false
			}
		}
	}
	return true
}

func sameJSON(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
