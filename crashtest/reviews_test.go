package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/reviews"
)

// reviewed is a review a 2xx create returned.
type reviewed struct {
	id        string
	reviewers []string // member ids
	// settled is set once an answer showed the review settled; the load
	// then mostly leaves it alone (guarded by load.mu).
	settled bool
}

// publishReviewReports publishes the reports the load asks reviews on, shared
// with everyone so that each demo member may review them. They join the
// load's reports, so publishes add versions under the reviews and the
// report checks cover them like the others.
func (l *load) publishReviewReports(n int) error {
	for i := range n {
		key := l.newKey("publish")
		b, _ := json.Marshal(map[string]any{"title": "Reviewed report " + key, "living": true, "audience": []string{"everyone"},
			"changeSummary": key, "content": "<h1>" + key + "</h1>"})
		o := &op{kind: opCreateReport, path: "/api/v1/reports", token: l.svc.keys().AgentKey, key: key, body: string(b)}
		l.send(o)
		if o.status != http.StatusCreated {
			return fmt.Errorf("report %d for reviews: %d %s", i, o.status, o.respBody)
		}
		l.reports = append(l.reports, idOf(o.respBody))
		l.reviewReports = append(l.reviewReports, idOf(o.respBody))
	}
	return nil
}

// createReview asks 1 to 3 members for a verdict on one of the review
// reports' live version; some expire during the run.
func (l *load) createReview(rng *rand.Rand, people []person) {
	emails, ids := askSome(rng, people)
	expires := l.expiry(rng, 30)
	key := l.newKey("review")
	body := map[string]any{"title": "Check " + key, "reportId": l.reviewReports[rng.IntN(len(l.reviewReports))], "reviewers": emails,
		"requiredApprovals": 1 + rng.IntN(len(ids)), "externalId": key, "expiresAt": expires.UTC().Format(time.RFC3339)}
	if rng.IntN(100) < 40 {
		body["callbackUrl"] = l.receiver + "/callback"
	}
	l.createRequest(opCreateReview, "/api/v1/reviews", key, body, func(id string, answer []byte) {
		l.reviewed = append(l.reviewed, &reviewed{id: id, reviewers: askedOf(answer, people, ids)})
	})
}

// askedOf are the load's people a review's answer says it asks, where it
// says: someone away is replaced by who stands in for them, and a verdict
// by the one replaced would only be refused. Else named, the ids asked for.
func askedOf(answer []byte, people []person, named []string) []string {
	var got struct {
		ResolvedReviewers []struct{ ID string } `json:"resolvedReviewers"`
	}
	var out []string
	if json.Unmarshal(answer, &got) == nil {
		for _, p := range got.ResolvedReviewers {
			if personOf(people, p.ID).id != "" {
				out = append(out, p.ID)
			}
		}
	}
	if len(out) == 0 {
		return named
	}
	return out
}

// pickReview returns a recent review, most likely one still open: one in
// six picks may fall on a review known to be settled, to be refused.
func (l *load) pickReview(rng *rand.Rand) *reviewed {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := l.reviewed[max(0, len(l.reviewed)-30):]
	open := slices.DeleteFunc(slices.Clone(recent), func(v *reviewed) bool { return v.settled })
	if len(open) == 0 || rng.IntN(6) == 0 {
		open = recent
	}
	if len(open) == 0 {
		return nil
	}
	return open[rng.IntN(len(open))]
}

// noteSettled marks v settled when o's answer shows it is.
func (l *load) noteSettled(v *reviewed, o *op) {
	var got struct{ Status string }
	_ = json.Unmarshal(o.respBody, &got)
	if (o.acknowledged() && got.Status != "open") || errorCode(o.respBody) == "invalid_state" {
		l.mu.Lock()
		v.settled = true
		l.mu.Unlock()
	}
}

// verdict returns one person's verdict, its note naming its
// Idempotency-Key so the check finds which request each stored verdict
// came from. The person is one of the reviewers, at random, so a reviewer
// who already answered answers again (already_decided), and now and then
// a member who was not asked (not_a_reviewer).
func (l *load) verdict(rng *rand.Rand, v *reviewed, people []person) {
	var who person
	var others []person
	for _, p := range people {
		if !slices.Contains(v.reviewers, p.id) {
			others = append(others, p)
		}
	}
	if len(others) > 0 && rng.IntN(100) < 5 {
		who = others[rng.IntN(len(others))]
	} else {
		who = oneOf(rng, people, v.reviewers)
	}
	key := l.newKey("verdict")
	verdict := reviews.VerdictApproved
	if rng.IntN(100) < 25 {
		verdict = reviews.VerdictChangesRequested
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "note": key})
	o := &op{kind: opVerdict, path: "/api/v1/reviews/" + v.id + "/verdict", token: who.token, key: key, body: string(b),
		reviewID: v.id, deciderID: who.id, decision: verdict}
	l.send(o)
	l.noteSettled(v, o)
}

// cancelReview withdraws v as the agent.
func (l *load) cancelReview(v *reviewed) {
	o := &op{kind: opCancelReview, path: "/api/v1/reviews/" + v.id + "/cancel", token: l.svc.keys().AgentKey,
		key: l.newKey("revcancel"), reviewID: v.id}
	l.send(o)
	l.noteSettled(v, o)
}

// review is what the check reads of a review.
type review struct {
	requestHead
	ReportID          string `json:"reportId"`
	VersionID         string `json:"versionId"`
	RequiredApprovals int    `json:"requiredApprovals"`
	ApprovalsSoFar    int    `json:"approvalsSoFar"`
	ResolvedReviewers []struct {
		ID  string `json:"id"`
		Via []via  `json:"via"`
	} `json:"resolvedReviewers"`
	Verdicts []storedVerdict `json:"verdicts"`
}

// storedVerdict is one verdict a review holds.
type storedVerdict struct {
	Reviewer struct {
		ID string `json:"id"`
	} `json:"reviewer"`
	Verdict    string     `json:"verdict"`
	Note       string     `json:"note"`
	OnBehalfOf *delegator `json:"onBehalfOf"`
}

// verdictsBy counts the verdicts of personID.
func (v *review) verdictsBy(personID string) int {
	n := 0
	for _, x := range v.Verdicts {
		if x.Reviewer.ID == personID {
			n++
		}
	}
	return n
}

// returnedAs reports whether a verdict counts as one of voices.
func (v *review) returnedAs(voices []string) bool {
	return slices.ContainsFunc(v.Verdicts, func(x storedVerdict) bool { return slices.Contains(voices, voiceOf(x.Reviewer.ID, x.OnBehalfOf)) })
}

// via is how a request reached someone it asks.
type via struct {
	Kind string `json:"kind"`
}

// named reports whether the review asks personID in their own name, not
// only as someone's stand-in.
func (v *review) named(personID string) bool {
	for _, p := range v.ResolvedReviewers {
		if p.ID == personID && slices.ContainsFunc(p.Via, func(w via) bool { return w.Kind != "delegation" }) {
			return true
		}
	}
	return false
}

func (v *review) asked(personID string) bool {
	for _, p := range v.ResolvedReviewers {
		if p.ID == personID {
			return true
		}
	}
	return false
}

// expectedReview is the event kinds the final status of a review implies:
// review.requested, then the one settling event (a cancellation emits
// none). Individual verdicts that do not settle it send nothing.
func expectedReview(status string) []string {
	out := []string{events.ReviewRequested}
	switch status {
	case "approved":
		out = append(out, events.ReviewApproved)
	case "changes_requested":
		out = append(out, events.ReviewChangesRequested)
	case "expired":
		out = append(out, events.ReviewExpired)
	}
	return out
}

// reviewKinds are every event kind a review sends.
var reviewKinds = []string{events.ReviewRequested, events.ReviewApproved, events.ReviewChangesRequested, events.ReviewExpired}

// errorCode is the code of an error answer, or "".
func errorCode(body []byte) string {
	var e struct{ Error struct{ Code string } }
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

// checkReviews compares what agents and reviewers were told with the final
// reviews, their workflows and the receiver.
func (l *load) checkReviews(ctx context.Context, rcv *receiver, tc client.Client, r *report) ([]review, error) {
	all, err := settle(ctx, l, r, "/api/v1/reviews", func(v review) requestHead { return v.requestHead },
		func(id string) *op { return &op{kind: opCancelReview, reviewID: id} })
	if err != nil {
		return nil, err
	}
	r.Reviews = len(all)
	r.ReviewOutcomes = map[string]int{}
	byID := map[string]review{}
	byKey := map[string][]review{}
	for _, v := range all {
		byID[v.ID] = v
		byKey[v.ExternalID] = append(byKey[v.ExternalID], v)
		r.VerdictsStored += len(v.Verdicts)
		r.ReviewOutcomes[v.Status]++
	}

	// The webhook gets review.requested and the settling event
	// (review.expired included); the callback the settling event. Nothing else, each under one
	// delivery id (counted with the others in check).
	owed := make([]owedEvents, len(all))
	for i, v := range all {
		owed[i] = owedEvents{id: v.ID, requestType: events.RequestReview, kinds: expectedReview(v.Status), callback: v.CallbackURL != nil}
	}
	awaitEvents(ctx, rcv, owed, r)
	got := rcv.deliveries()
	for _, v := range all {
		expect := expectedReview(v.Status)
		for _, kind := range reviewKinds {
			for _, target := range []string{"webhook", "callback"} {
				n := len(got[[3]string{target, v.ID, kind}])
				allowed := slices.Contains(expect, kind) && (target == "webhook" || (v.CallbackURL != nil && events.IsCallbackEvent(events.RequestReview, kind)))
				if n > 0 && !allowed {
					r.problem(&r.UnexpectedEvents, "%s is %s but the %s got %s", v.ID, v.Status, target, kind)
				}
			}
		}
	}

	// The status follows from the verdicts: changes_requested exactly when
	// one reviewer requested changes (the last verdict taken), approved
	// exactly when the approvals reached requiredApprovals (and no more
	// were taken), each verdict by a distinct reviewer who was asked.
	for _, v := range all {
		approvals, changes := 0, 0
		for i, x := range v.Verdicts {
			switch x.Verdict {
			case reviews.VerdictApproved:
				approvals++
			case reviews.VerdictChangesRequested:
				changes++
				if i != len(v.Verdicts)-1 {
					r.problem(&r.CompletionMismatches, "%s took a verdict after the changes_requested by %s", v.ID, x.Reviewer.ID)
				}
			}
			if !v.asked(x.Reviewer.ID) {
				r.problem(&r.CompletionMismatches, "%s holds a verdict by %s, who was not asked", v.ID, x.Reviewer.ID)
			}
		}
		counted := map[string]bool{}
		for _, x := range v.Verdicts {
			if n := v.verdictsBy(x.Reviewer.ID); n > 1 && !counted[x.Reviewer.ID] {
				counted[x.Reviewer.ID] = true
				r.problem(&r.Duplicates, "%s holds %d verdicts by %s", v.ID, n, x.Reviewer.ID)
			}
		}
		ok := v.ApprovalsSoFar == approvals && changes <= 1 && approvals <= v.RequiredApprovals &&
			(v.Status == "changes_requested") == (changes == 1) &&
			(v.Status == "approved") == (changes == 0 && approvals >= v.RequiredApprovals) &&
			(v.Status == "open") == (v.SettledAt == nil)
		if !ok {
			r.problem(&r.CompletionMismatches, "%s is %s with %d approvals (approvalsSoFar %d) of %d required and %d changes_requested",
				v.ID, v.Status, approvals, v.ApprovalsSoFar, v.RequiredApprovals, changes)
		}
	}

	// Creates: one review per key, the one the agent was given; a refused
	// create made none, and a refused cancel cancelled nothing. Each verdict answered 2xx is stored once, as sent;
	// each refused one is not, for the reason it was given; and every
	// stored verdict is one a reviewer was told was taken.
	r.VerdictsRefused = map[string]int{}
	told := map[string]*op{}
	refused := l.refusedAlone()
	for _, o := range l.ops {
		switch o.kind {
		case opCreateReview:
			made := byKey[o.key]
			if len(made) > 1 {
				r.problem(&r.Duplicates, "key %s made %d reviews", o.key, len(made))
			}
			switch {
			case o.acknowledged() && (len(made) == 0 || byID[idOf(o.respBody)].ID == ""):
				r.problem(&r.Lost, "key %s was answered %d with %s, which does not exist", o.key, o.status, idOf(o.respBody))
			case o.acknowledged() && byID[idOf(o.respBody)].VersionID != versionIDOf(o.respBody):
				r.problem(&r.Divergences, "review %s was created on version %s but reads %s", idOf(o.respBody), versionIDOf(o.respBody),
					byID[idOf(o.respBody)].VersionID)
			case o.status != 0 && !o.acknowledged() && len(made) > 0:
				r.problem(&r.Divergences, "review create %s was answered %d yet made %s", o.key, o.status, made[0].ID)
			}
		case opCancelReview:
			if v := byID[o.reviewID]; o.acknowledged() && v.Status != "cancelled" {
				r.problem(&r.ActionsNotReflected, "cancel %s of %s answered %d but the review is %s", o.key, o.reviewID, o.status, v.Status)
			} else if refused(o) && v.Status == "cancelled" {
				r.problem(&r.RefusedButDone, "cancel %s of %s was refused %d (%.200s) yet the review is cancelled", o.key, o.reviewID, o.status, o.respBody)
			}
		case opVerdict:
			v := byID[o.reviewID]
			var stored []int
			for i, x := range v.Verdicts {
				if x.Note == o.key {
					stored = append(stored, i)
				}
			}
			if o.acknowledged() {
				told[o.reviewID+" "+o.key] = o
				if len(stored) != 1 || v.Verdicts[stored[0]].Reviewer.ID != o.deciderID || v.Verdicts[stored[0]].Verdict != o.decision {
					r.problem(&r.ActionsNotReflected, "verdict %s (%s by %s) on %s answered %d but the review (%s) holds it %d times",
						o.key, o.decision, o.deciderID, o.reviewID, o.status, v.Status, len(stored))
				}
				continue
			}
			if o.status == 0 {
				told[o.reviewID+" "+o.key] = o // unanswered: it may have been taken
				continue
			}
			code := errorCode(o.respBody)
			r.VerdictsRefused[code]++
			consistent := len(stored) == 0
			switch code {
			case "already_decided":
				// By them, or by or for whom they act with.
				consistent = consistent && v.verdictsBy(o.deciderID) <= 1 && v.returnedAs(l.delegations.voices(o.deciderID))
			case "invalid_state":
				consistent = consistent && v.Status != "open"
			case "not_a_reviewer":
				// Someone asked only as a stand-in may have been asked
				// after the refusal, when a delegation handed the review
				// to them.
				consistent = consistent && !v.named(o.deciderID)
			}
			if !consistent {
				r.problem(&r.ActionsNotReflected, "verdict %s by %s on %s was refused %d %s but the review (%s) holds %d of theirs (%d with its key)",
					o.key, o.deciderID, o.reviewID, o.status, code, v.Status, v.verdictsBy(o.deciderID), len(stored))
			}
		}
	}
	for _, v := range all {
		for _, x := range v.Verdicts {
			if o := told[v.ID+" "+x.Note]; o == nil || o.deciderID != x.Reviewer.ID {
				r.problem(&r.Divergences, "%s holds a %s verdict by %s (note %q) that no reviewer was told was taken or left unanswered", v.ID, x.Verdict,
					x.Reviewer.ID, x.Note)
			}
		}
	}

	// The read model says what the workflow did.
	wctx, cancelAll := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelAll()
	for _, v := range all {
		var state reviews.State
		err := tc.GetWorkflow(wctx, reviews.WorkflowID(v.ID), "").Get(wctx, &state)
		if err != nil || state.Status != v.Status || len(state.Verdicts) != len(v.Verdicts) || state.ApprovalsSoFar != v.ApprovalsSoFar {
			r.problem(&r.Divergences, "%s reads %s with %d verdicts (%d approvals) but its workflow says %q with %d (%d) (%v)", v.ID, v.Status,
				len(v.Verdicts), v.ApprovalsSoFar, state.Status, len(state.Verdicts), state.ApprovalsSoFar, err)
		}
	}
	return all, nil
}

// versionIDOf is the versionId a review's answer names.
func versionIDOf(body []byte) string {
	var v struct{ VersionID string }
	_ = json.Unmarshal(body, &v)
	return v.VersionID
}
