package crashtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/models"
)

// Standing mandates and execution receipts under the crash load: a member
// grants a mandate over part of the gate's "quick" rule, so checks there
// are allowed until its budget is spent and then go to a person; every
// allowed check's executor posts a receipt, some of them for an input
// other than the one allowed.

// opReceipt is an execution receipt posted after an allowed check.
const opReceipt = "receipt"

// mandateBudget is how many checks the mandate may allow in all; amounts
// from mandateFrom to the quick rule's 39 are covered.
const (
	mandateBudget = 6
	mandateFrom   = 35
	// mandateEvery spreads the checks the mandate covers over the run, so
	// that its budget is spent across the kills, not in the first seconds.
	mandateEvery = 2500 * time.Millisecond
)

// mandated reports whether the mandate's condition covers amount (the
// policy asks a person for it, at low risk).
func mandated(amount int) bool { return amount >= mandateFrom && amount < 40 }

// grantMandate lets members grant mandates and has the first member grant
// one over the quick rule's upper amounts, as a member token would.
func (l *load) grantMandate() error {
	org := &op{kind: "organization", path: "/api/v1/admin/organization", token: l.svc.keys().AdminKey, key: "members-grant"}
	if err := l.patch(org, `{"membersMayGrantMandates":true}`); err != nil {
		return err
	}
	people := l.people()
	if len(people) == 0 {
		return fmt.Errorf("no member to grant the mandate")
	}
	body, _ := json.Marshal(map[string]any{"action": gateAction, "condition": fmt.Sprintf("input.amount >= %d", mandateFrom),
		"budget": map[string]any{"count": mandateBudget, "window": "mandate"}, "note": "crash test",
		"expiresAt": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)})
	o := &op{kind: "mandate", path: "/api/v1/mandates", token: people[0].token, key: "mandate", body: string(body)}
	l.send(o)
	if o.status != http.StatusCreated {
		return fmt.Errorf("grant the mandate: %d %s", o.status, o.respBody)
	}
	l.mandateID = idOf(o.respBody)
	return nil
}

// patch sends body to o's path with PATCH, once.
func (l *load) patch(o *op, body string) error {
	req, err := http.NewRequest(http.MethodPatch, l.svc.url(o.path), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PATCH %s: %d", o.path, resp.StatusCode)
	}
	return nil
}

// reportExecution posts the receipt of allowed check o: the input allowed,
// or (one in ten) another amount, which is a mismatch.
func (l *load) reportExecution(rng *rand.Rand, check *op) {
	token := gateAnswerOf(check.respBody).DecisionToken
	if token == nil {
		return
	}
	amount, mismatch := check.gateAmount, rng.IntN(10) == 0
	if mismatch {
		amount = (amount + 1) % 101
	}
	b, _ := json.Marshal(map[string]any{"decisionToken": *token, "input": map[string]any{"amount": amount}, "outcome": "succeeded",
		"result": map[string]any{"check": check.key}, "startedAt": time.Now().UTC().Format(time.RFC3339Nano),
		"finishedAt": time.Now().UTC().Format(time.RFC3339Nano)})
	l.send(&op{kind: opReceipt, path: "/api/v1/receipts", token: l.svc.keys().AgentKey, key: l.newKey("receipt"), body: string(b),
		gateAmount: check.gateAmount, mismatch: mismatch, checkKey: check.key})
}

// checkMandate holds the mandate to its budget: the checks that name it
// are those answered so, each with one use; it allowed at most its budget,
// and all of it once any covered check went to a person; mandate.granted
// was written once, and mandate.exhausted once when it was spent and
// otherwise never; both are owed to the webhook.
func (l *load) checkMandate(db *gorm.DB, answers map[string]gateAnswer, r *report) ([]owedEvents, error) {
	var uses []struct{ GateCheckID, MandateID string }
	if err := db.Raw("SELECT gate_check_id, mandate_id FROM mandate_uses").Scan(&uses).Error; err != nil {
		return nil, fmt.Errorf("read mandate uses: %w", err)
	}
	var named []string
	if err := db.Raw("SELECT id FROM gate_checks WHERE mandate_id IS NOT NULL").Scan(&named).Error; err != nil {
		return nil, fmt.Errorf("read mandated checks: %w", err)
	}
	r.MandateUses = len(uses)
	used := map[string]int{}
	for _, u := range uses {
		used[u.GateCheckID]++
		if u.MandateID != l.mandateID {
			r.problem(&r.GateMismatches, "check %s spent mandate %s, which nobody granted", u.GateCheckID, u.MandateID)
		}
	}
	for _, id := range named {
		if used[id] != 1 {
			r.problem(&r.GateMismatches, "check %s names the mandate but spent it %d times", id, used[id])
		}
	}
	if len(uses) != len(named) {
		r.problem(&r.GateMismatches, "the mandate has %d uses but %d checks name it", len(uses), len(named))
	}
	if len(uses) > mandateBudget {
		r.problem(&r.GateMismatches, "the mandate allowed %d checks, over its budget of %d", len(uses), mandateBudget)
	}
	for _, o := range l.ops {
		a, ok := answers[o.key]
		if o.kind == opGate && ok && mandated(o.gateAmount) && a.decision(o.status) == models.GateApprovalRequired && len(uses) < mandateBudget {
			r.problem(&r.GateMismatches, "gate %s (amount %d) went to a person with %d of the mandate's %d uses left",
				o.key, o.gateAmount, mandateBudget-len(uses), mandateBudget)
		}
	}
	var outbox []struct{ Kind string }
	if err := db.Raw("SELECT kind FROM events WHERE subject_type = ? AND subject_id = ?", "mandate", l.mandateID).Scan(&outbox).Error; err != nil {
		return nil, fmt.Errorf("read the mandate's events: %w", err)
	}
	kinds := map[string]int{}
	for _, e := range outbox {
		kinds[e.Kind]++
	}
	want := map[string]int{events.MandateGranted: 1}
	if len(uses) == mandateBudget {
		want[events.MandateExhausted] = 1
	}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		r.problem(&r.OutboxMismatches, "the mandate wrote %v to the outbox, not %v", kinds, want)
	}
	owed := owedEvents{id: l.mandateID, requestType: "mandate"}
	for k := range want {
		owed.kinds = append(owed.kinds, k)
	}
	return []owedEvents{owed}, nil
}

// checkReceipts holds every receipt posted to what it was told: a match
// answered 201 and a mismatch 409 input_mismatch, each with the receipt the
// database holds for its token (one per token, whatever the retries), a
// replay with its key answering the same; each mismatch wrote one
// execution.mismatch, owed to the webhook, and nothing else did.
func (l *load) checkReceipts(db *gorm.DB, r *report) ([]owedEvents, error) {
	var rows []struct {
		ID, TokenID string
		Mismatch    bool
	}
	if err := db.Raw("SELECT id, token_id, mismatch FROM receipts").Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("read receipts: %w", err)
	}
	stored := map[string]bool{} // receipt id → mismatch
	for _, rc := range rows {
		stored[rc.ID] = rc.Mismatch
	}
	r.ReceiptsStored = len(rows)
	var outbox []struct{ SubjectID, Kind string }
	if err := db.Raw("SELECT subject_id, kind FROM events WHERE subject_type = ?", "receipt").Scan(&outbox).Error; err != nil {
		return nil, fmt.Errorf("read the receipts' events: %w", err)
	}
	mismatches := map[string]int{}
	for _, e := range outbox {
		if e.Kind != events.ExecutionMismatch {
			r.problem(&r.OutboxMismatches, "receipt %s wrote %s", e.SubjectID, e.Kind)
		}
		mismatches[e.SubjectID]++
	}
	var owed []owedEvents
	answered := map[string]bool{}
	for _, o := range l.ops {
		if o.kind != opReceipt || o.status == 0 {
			continue
		}
		id := receiptOf(o.respBody)
		want, code := http.StatusCreated, ""
		if o.mismatch {
			want, code = http.StatusConflict, "input_mismatch"
		}
		if o.status != want || (code != "" && !strings.Contains(string(o.respBody), `"`+code+`"`)) || id == "" {
			r.problem(&r.ReceiptMismatches, "receipt %s for gate %s (mismatch %t) was answered %d %s", o.key, o.checkKey, o.mismatch, o.status, o.respBody)
			continue
		}
		r.Ops[opReceipt]++
		if answered[id] {
			r.problem(&r.Duplicates, "receipt %s was answered to two keys", id)
		}
		answered[id] = true
		if m, ok := stored[id]; !ok || m != o.mismatch {
			r.problem(&r.Lost, "receipt %s answered %s, which the database holds as %t (held: %t)", o.key, id, m, ok)
		}
		wantEvents := 0
		if o.mismatch {
			wantEvents = 1
			owed = append(owed, owedEvents{id: id, requestType: "receipt", kinds: []string{events.ExecutionMismatch}})
		}
		if mismatches[id] != wantEvents {
			r.problem(&r.OutboxMismatches, "receipt %s wrote execution.mismatch %d times", id, mismatches[id])
		}
		again := &op{kind: o.kind, path: o.path, token: o.token, key: o.key, body: o.body}
		l.send(again)
		if again.status != o.status || receiptOf(again.respBody) != id {
			r.problem(&r.ReplayMismatches, "receipt %s answered %d %s then %d %s", o.key, o.status, id, again.status, receiptOf(again.respBody))
		}
	}
	if len(rows) != len(answered) {
		// A receipt whose client gave up may be stored unanswered; more
		// than one per token cannot be (the jti is unique).
		r.ReceiptsUnanswered = len(rows) - len(answered)
	}
	return owed, nil
}

// receiptOf is the receipt's id in a 201 body or a 409's `receipt`.
func receiptOf(body []byte) string {
	var v struct {
		ID      string `json:"id"`
		Receipt struct {
			ID string `json:"id"`
		} `json:"receipt"`
	}
	_ = json.Unmarshal(body, &v)
	if v.ID != "" {
		return v.ID
	}
	return v.Receipt.ID
}
