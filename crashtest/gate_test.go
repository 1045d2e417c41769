package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
)

// opGate is a check put to the action gate.
const opGate = "gate check"

// gateAction is the action the load asks the gate about: a refund of an
// integer amount from 0 to 100.
const gateAction = "crash.refund"

// gateDenyReason is what the deny rule answers.
const gateDenyReason = "refunds of 70 or more go through the finance system"

// registerGateAction registers gateAction through the admin key: up to 30
// runs, 70 or more is refused, below 40 the members decide within 8
// seconds (so some expire during the run), the rest within the load's
// patience. The members are the approvers, so the load's decisions settle
// these approvals like its own.
func (l *load) registerGateAction() error {
	var emails []string
	for _, p := range l.people() {
		emails = append(emails, p.email)
	}
	body, _ := json.Marshal(map[string]any{
		"name": gateAction, "description": "Refund a customer (crash test)",
		"inputSchema": map[string]any{"type": "object", "required": []string{"amount"}, "additionalProperties": false,
			"properties": map[string]any{"amount": map[string]any{"type": "integer", "minimum": 0, "maximum": 100}}},
		"editableFields": []string{"amount"},
		"policy": []map[string]any{
			{"name": "small", "condition": "input.amount <= 30", "outcome": "allow"},
			{"name": "large", "condition": "input.amount >= 70", "outcome": "deny", "reason": gateDenyReason},
			{"name": "quick", "condition": "input.amount < 40", "outcome": "approval", "risk": "low", "approvers": emails, "expiresIn": "8s"},
			{"name": "people", "outcome": "approval", "risk": "high", "approvers": emails, "expiresIn": l.patience.String()},
		},
	})
	o := &op{kind: "action", path: "/api/v1/admin/actions", token: l.svc.keys().AdminKey, key: "gate-action", body: string(body)}
	l.send(o)
	if o.status != http.StatusCreated {
		return fmt.Errorf("register %s: %d %s", gateAction, o.status, o.respBody)
	}
	return l.grantMandate()
}

// gateDecision is what the policy answers for amount.
func gateDecision(amount int) string {
	switch {
	case amount <= 30:
		return models.GateAllowed
	case amount >= 70:
		return models.GateDenied
	}
	return models.GateApprovalRequired
}

// gate asks the gate about a refund, as the demo agent, with an
// Idempotency-Key it also sends as the externalId, so the check, the
// approval it may raise and its gate.denied can be found by the key. An
// approval it raises joins the load's approvals, to be decided, cancelled
// or left to expire.
func (l *load) gate(rng *rand.Rand, people []person) {
	// The mandate's range once every mandateEvery, and never between.
	amount := rng.IntN(101)
	l.mu.Lock()
	if time.Since(l.lastMandated) >= mandateEvery {
		amount, l.lastMandated = mandateFrom+rng.IntN(40-mandateFrom), time.Now()
	} else if mandated(amount) {
		amount = rng.IntN(mandateFrom)
	}
	l.mu.Unlock()
	key := l.newKey("gate")
	b, _ := json.Marshal(map[string]any{"action": gateAction, "input": map[string]any{"amount": amount}, "externalId": key})
	o := &op{kind: opGate, path: "/api/v1/gate", token: l.svc.keys().AgentKey, key: key, body: string(b), gateAmount: amount}
	if rng.IntN(4) == 0 {
		l.sendTwice(o)
	} else {
		l.send(o)
	}
	if o.status == http.StatusOK {
		l.reportExecution(rng, o)
	}
	if o.status != http.StatusAccepted {
		return
	}
	a := gateAnswerOf(o.respBody).Approval
	if a == nil || a.ID == "" {
		return
	}
	var ids []string
	for _, p := range people {
		ids = append(ids, p.id)
	}
	l.mu.Lock()
	l.approvals = append(l.approvals, &created{id: a.ID, key: key, approvers: ids, expiresAt: a.ExpiresAt})
	l.mu.Unlock()
}

// gateAnswer is what the check reads of the gate's answer: a 200 or 202
// body, or a 403 error.
type gateAnswer struct {
	Decision      string    `json:"decision"`
	CheckID       string    `json:"checkId"`
	Action        string    `json:"action"`
	DecisionToken *string   `json:"decisionToken"`
	MandateID     *string   `json:"mandateId"`
	Approval      *approval `json:"approval"`
	Error         struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func gateAnswerOf(body []byte) gateAnswer {
	var a gateAnswer
	_ = json.Unmarshal(body, &a)
	return a
}

// decision is the answer's decision, denied for a 403 gate_denied, or ""
// for any other answer.
func (a gateAnswer) decision(status int) string {
	switch {
	case status == http.StatusOK && a.Decision == models.GateAllowed:
		return a.Decision
	case status == http.StatusAccepted && a.Decision == models.GateApprovalRequired && a.Approval != nil:
		return a.Decision
	case status == http.StatusForbidden && a.Error.Code == "gate_denied":
		return models.GateDenied
	}
	return ""
}

// same reports whether b answers as a did: the same decision, the same
// check; the same decision token when allowed, the same approval when one
// was required, the same reason when denied.
func (a gateAnswer) same(b gateAnswer) bool {
	if a.Decision != b.Decision || a.CheckID != b.CheckID || a.Error != b.Error {
		return false
	}
	return sameString(a.DecisionToken, b.DecisionToken) && sameString(a.MandateID, b.MandateID) &&
		(a.Approval == nil) == (b.Approval == nil) && (a.Approval == nil || a.Approval.ID == b.Approval.ID)
}

// gateCheckRow is a gate check as the database holds it.
type gateCheckRow struct {
	ID            string
	Action        string
	Decision      string
	Rule          string
	Reason        string
	ApprovalID    *string
	DecisionToken *string
	ExternalID    *string
	MandateID     *string
}

// checkGate holds every check the gate answered to what it said, once
// every approval has settled: the answer follows the policy; a replay with
// its key answers the same (the same token, the same approval), also when
// it resumes the check as after a kill; the database holds one check per
// key, the one answered, bound to the key's claim (an approval_required
// check through its approval); an approval required made exactly one
// approval, of the action; and a denial wrote one gate.denied to the
// outbox, delivered to the webhook under one delivery id, and nothing else
// did.
func (l *load) checkGate(ctx context.Context, rcv *receiver, approvals []approval, r *report) error {
	byKey := map[string][]approval{}
	for _, a := range approvals {
		byKey[a.ExternalID] = append(byKey[a.ExternalID], a)
	}
	var asked []*op
	answers := map[string]gateAnswer{}
	r.GateAnswers, r.GateApprovalOutcomes = map[string]int{}, map[string]int{}
	for _, o := range l.ops {
		if o.kind != opGate {
			continue
		}
		asked = append(asked, o)
		if o.status == 0 {
			continue // counted unacknowledged
		}
		if o.tries > 1 {
			r.GateRetried++
		}
		a := gateAnswerOf(o.respBody)
		d := a.decision(o.status)
		if d == "" {
			r.problem(&r.GateMismatches, "gate %s (amount %d) was answered %d %s", o.key, o.gateAmount, o.status, o.respBody)
			continue
		}
		answers[o.key] = a
		r.Ops[opGate]++
		r.GateAnswers[d]++
		if want := gateDecision(o.gateAmount); d != want && (d != models.GateAllowed || !mandated(o.gateAmount)) {
			r.problem(&r.GateMismatches, "gate %s (amount %d) answered %s, the policy says %s", o.key, o.gateAmount, d, want)
		}
		if byMandate := a.MandateID != nil; byMandate != (d == models.GateAllowed && mandated(o.gateAmount)) ||
			(byMandate && *a.MandateID != l.mandateID) {
			r.problem(&r.GateMismatches, "gate %s (amount %d) answered %s with mandate %v", o.key, o.gateAmount, d, a.MandateID)
		}
		if d == models.GateDenied && a.Error.Message != `the policy rule "large" denies it: `+gateDenyReason {
			r.problem(&r.GateMismatches, "gate %s was denied with %q", o.key, a.Error.Message)
		}
	}

	db, err := models.Open(l.svc.databaseURL())
	if err != nil {
		return err
	}
	if sqlDB, err := db.DB(); err == nil {
		defer sqlDB.Close()
	}

	// A retry with the key answers as the first time: once from the
	// stored answer (a denial has none, so it resumes), and once more after
	// the claims are marked unfinished, as a kill between the answer and
	// its storing leaves them, so that every retry resumes the check.
	replay := func(when string) {
		for _, o := range asked {
			first, ok := answers[o.key]
			if !ok {
				continue
			}
			again := &op{kind: o.kind, path: o.path, token: o.token, key: o.key, body: o.body}
			l.send(again)
			if again.status != o.status || !first.same(gateAnswerOf(again.respBody)) {
				r.problem(&r.ReplayMismatches, "gate %s answered %d %s then, %s, %d %s", o.key, o.status, o.respBody, when,
					again.status, again.respBody)
			}
		}
	}
	replay("replayed")
	if len(answers) > 0 {
		keys := make([]string, 0, len(answers))
		for k := range answers {
			keys = append(keys, k)
		}
		res := db.Exec("UPDATE idempotency_keys SET completed = ? WHERE completed = ? AND idempotency_key IN ?", false, true, keys)
		if res.Error != nil {
			return fmt.Errorf("mark gate claims unfinished: %w", res.Error)
		}
		r.GateResumed = int(res.RowsAffected)
		replay("resumed")
	}

	var rows []gateCheckRow
	if err := db.Raw("SELECT id, action, decision, rule, reason, approval_id, decision_token, external_id, mandate_id FROM gate_checks").
		Scan(&rows).Error; err != nil {
		return fmt.Errorf("read gate checks: %w", err)
	}
	var claims []struct{ IdempotencyKey, ResourceID string }
	if err := db.Raw("SELECT idempotency_key, resource_id FROM idempotency_keys WHERE idempotency_key LIKE ?", "gate-%").
		Scan(&claims).Error; err != nil {
		return fmt.Errorf("read idempotency keys: %w", err)
	}
	var outbox []struct{ SubjectID, Kind string }
	if err := db.Raw("SELECT subject_id, kind FROM events WHERE subject_type = ?", "gate_check").Scan(&outbox).Error; err != nil {
		return fmt.Errorf("read outbox: %w", err)
	}
	r.GateChecksStored = len(rows)
	checks := map[string][]gateCheckRow{}
	for _, c := range rows {
		if c.ExternalID != nil {
			checks[*c.ExternalID] = append(checks[*c.ExternalID], c)
		}
	}
	resource := map[string]string{}
	for _, c := range claims {
		resource[c.IdempotencyKey] = c.ResourceID
	}
	denials := map[string]int{}
	for _, e := range outbox {
		if e.Kind != events.GateDenied {
			r.problem(&r.OutboxMismatches, "gate check %s wrote %s to the outbox", e.SubjectID, e.Kind)
			continue
		}
		denials[e.SubjectID]++
	}

	var owed []owedEvents
	denied := map[string]bool{} // check ids
	for _, o := range asked {
		made := checks[o.key]
		if len(made) > 1 {
			r.problem(&r.Duplicates, "gate %s recorded %d checks", o.key, len(made))
		}
		// Every check recorded denied owes its gate.denied, answered or not.
		for _, c := range made {
			want := 0
			if c.Decision == models.GateDenied {
				want = 1
				denied[c.ID] = true
				owed = append(owed, owedEvents{id: c.ID, requestType: "gate_check", kinds: []string{events.GateDenied}})
			}
			if denials[c.ID] != want {
				r.problem(&r.OutboxMismatches, "gate check %s (%s, key %s) wrote gate.denied %d times", c.ID, c.Decision, o.key, denials[c.ID])
			}
		}
		a, ok := answers[o.key]
		if !ok {
			continue
		}
		d := a.decision(o.status)
		if len(made) == 0 {
			r.problem(&r.Lost, "gate %s answered %s but recorded no check", o.key, d)
			continue
		}
		c := made[0]
		if c.Action != gateAction || c.Decision != d || (d != models.GateDenied && c.ID != a.CheckID) {
			r.problem(&r.GateMismatches, "gate %s answered %s (check %s) but recorded %s %s (check %s)", o.key, d, a.CheckID,
				c.Action, c.Decision, c.ID)
		}
		if d == models.GateAllowed && !sameString(c.DecisionToken, a.DecisionToken) {
			r.problem(&r.GateMismatches, "gate %s answered a decision token the check %s does not hold", o.key, c.ID)
		}
		if !sameString(c.MandateID, a.MandateID) {
			r.problem(&r.GateMismatches, "gate %s answered mandate %v but its check %s holds %v", o.key, a.MandateID, c.ID, c.MandateID)
		}
		raised := byKey[o.key]
		switch d {
		case models.GateApprovalRequired:
			r.GateApprovals++
			switch {
			case len(raised) == 0:
				r.problem(&r.Lost, "gate %s answered approval %s, which does not exist", o.key, a.Approval.ID)
			case len(raised) > 1:
				r.problem(&r.Duplicates, "gate %s made %d approvals", o.key, len(raised))
			case raised[0].ID != a.Approval.ID:
				r.problem(&r.GateMismatches, "gate %s answered approval %s but made %s", o.key, a.Approval.ID, raised[0].ID)
			case raised[0].Action == nil || *raised[0].Action != gateAction:
				r.problem(&r.GateMismatches, "gate %s made approval %s, which does not name the action (%v)", o.key, raised[0].ID, raised[0].Action)
			default:
				r.GateApprovalOutcomes[raised[0].Status]++
			}
			if c.ApprovalID == nil || *c.ApprovalID != a.Approval.ID {
				r.problem(&r.GateMismatches, "gate %s answered approval %s but its check %s names %v", o.key, a.Approval.ID, c.ID, c.ApprovalID)
			}
			if resource[o.key] != a.Approval.ID {
				r.problem(&r.GateMismatches, "gate %s answered approval %s but its key is bound to %q", o.key, a.Approval.ID, resource[o.key])
			}
		default:
			if len(raised) > 0 {
				r.problem(&r.GateMismatches, "gate %s answered %s but made approval %s", o.key, d, raised[0].ID)
			}
			if resource[o.key] != c.ID {
				r.problem(&r.GateMismatches, "gate %s answered %s (check %s) but its key is bound to %q", o.key, d, c.ID, resource[o.key])
			}
		}
	}

	more, err := l.checkMandate(db, answers, r)
	if err != nil {
		return err
	}
	owed = append(owed, more...)
	if more, err = l.checkReceipts(db, r); err != nil {
		return err
	}
	owed = append(owed, more...)

	// Each denial reached the webhook; nothing else did as gate.denied.
	awaitEvents(ctx, rcv, owed, r)
	for k := range rcv.deliveries() {
		if k[2] != events.GateDenied {
			continue
		}
		r.GateDeniedReceived++
		if k[0] != "webhook" || !denied[k[1]] {
			r.problem(&r.UnexpectedEvents, "%s got gate.denied for %s, not a denial the gate answered", k[0], k[1])
		}
	}
	return nil
}

// sameString reports whether a and b are both absent or hold one value.
func sameString(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
