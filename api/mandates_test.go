package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// mandateStack is a stack with the refund action registered and an agent
// key that may only ask the gate.
type mandateStack struct {
	*stack
	gateKey, gateKeyID string
}

func newMandateStack(t *testing.T, db *gorm.DB) *mandateStack {
	s := newStack(t, db)
	require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, refundAction, nil).status)
	k, secret, err := s.store.CreateKey(context.Background(), s.org.ID, "refunder", models.KeyAgent, []string{scopes.GateCheck, scopes.ReceiptsWrite})
	require.NoError(t, err)
	return &mandateStack{stack: s, gateKey: secret, gateKeyID: k.ID}
}

// check asks the gate about a refund of amount in currency.
func (s *mandateStack) check(t *testing.T, key string, amount int, currency string) response {
	t.Helper()
	return s.doAsClient(t, "/api/v1/gate", key, fmt.Sprintf(`{"action":"refund.create","input":{"amount":%d,"currency":%q,"customer":"cus_1"}}`, amount, currency))
}

// grant posts a mandate with the body's fields over a day's expiry.
func (s *mandateStack) grant(t *testing.T, token, fields string) response {
	t.Helper()
	expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	return s.do(t, "POST", "/api/v1/mandates", token, fmt.Sprintf(`{"action":"refund.create","expiresAt":%q,%s}`, expires, fields), nil)
}

func TestMandates(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		ctx := context.Background()
		count10 := `"budget":{"count":10,"window":"day"}`

		refusals := []struct {
			name, key, fields string
			status            int
			code, field       string
		}{
			{"an agent key", s.agentKey, count10, 403, "forbidden", ""},
			{"an admin key", s.adminKey, count10, 403, "forbidden", ""},
			{"a member, where only administrators grant", s.cyToken, count10, 403, "forbidden", ""},
			{"no budget", s.bobToken, `"note":"x"`, 400, "invalid_request", "budget"},
			{"a budget without a bound", s.bobToken, `"budget":{"window":"day"}`, 400, "invalid_request", "budget"},
			{"a window", s.bobToken, `"budget":{"count":3,"window":"month"}`, 400, "invalid_request", "budget.window"},
			{"a count of none", s.bobToken, `"budget":{"count":0,"window":"day"}`, 400, "invalid_request", "budget.count"},
			{"a sum over an undeclared field", s.bobToken, `"budget":{"sum":{"field":"total","max":10},"window":"day"}`, 400, "invalid_request", "budget.sum.field"},
			{"a sum over text", s.bobToken, `"budget":{"sum":{"field":"customer","max":10},"window":"day"}`, 400, "invalid_request", "budget.sum.field"},
			{"a sum over an enum of strings", s.bobToken, `"budget":{"sum":{"field":"currency","max":10},"window":"day"}`, 400, "invalid_request", "budget.sum.field"},
			{"a condition that does not compile", s.bobToken, count10 + `,"condition":"input.amount <"`, 400, "invalid_request", "condition"},
			{"an unknown agent key", s.bobToken, count10 + `,"agents":["key_nope"]`, 400, "invalid_request", "agents[0]"},
			{"an unknown field", s.bobToken, count10 + `,"forever":true`, 400, "invalid_request", "forever"},
			{"a start after the expiry", s.bobToken, count10 + `,"startsAt":"2099-01-01T00:00:00Z"`, 400, "invalid_request", "expiresAt"},
		}
		for _, c := range refusals {
			r := s.grant(t, c.key, c.fields)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
		}
		unknown := s.do(t, "POST", "/api/v1/mandates", s.bobToken, `{"action":"refund.delete","expiresAt":"2099-01-01T00:00:00Z",`+count10+`}`, nil)
		assert.Equal(t, 404, unknown.status, string(unknown.body))
		assert.Equal(t, "action", errField(unknown, "field"))
		past := s.do(t, "POST", "/api/v1/mandates", s.bobToken, `{"action":"refund.create","expiresAt":"2020-01-01T00:00:00Z",`+count10+`}`, nil)
		assert.Equal(t, "expiresAt", errField(past, "field"), string(past.body))

		// Members may grant once the organisation says so, within their
		// own authority: Cy is among Finance, but the rule's risk is high.
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"membersMayGrantMandates":true}`, nil).status)
		tooHigh := s.grant(t, s.cyToken, count10)
		require.Equal(t, 403, tooHigh.status, string(tooHigh.body))
		assert.Contains(t, errField(tooHigh, "message"), "its risk is high, above the medium")
		// Ada owns the organisation but is not among Finance.
		notAsked := s.grant(t, s.memberToken, count10)
		require.Equal(t, 403, notAsked.status, string(notAsked.body))
		assert.Contains(t, errField(notAsked, "message"), "Ada is not among its approvers")

		// Bob grants ten EUR refunds a day to the refund agent.
		granted := s.grant(t, s.bobToken, count10+fmt.Sprintf(`,"condition":"input.currency == \"EUR\"","agents":[%q],"note":"while the queue is long"`, s.gateKeyID))
		require.Equal(t, 201, granted.status, string(granted.body))
		id := granted.decoded["id"].(string)
		assert.Equal(t, "/api/v1/mandates/"+id, granted.header.Get("Location"))
		assert.Equal(t, "active", granted.decoded["status"])
		assert.Equal(t, map[string]any{"id": s.bob.ID, "name": "Bob"}, granted.decoded["grantedBy"])
		assert.Equal(t, map[string]any{"count": 10.0, "sum": nil}, granted.decoded["remaining"])
		require.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.granted"), 1)

		jwks := s.do(t, "GET", "/.well-known/jwks.json", "", "", nil)
		verifier, err := decisiontoken.NewVerifier(jwks.body, "http://assent.test", s.org.ID)
		require.NoError(t, err)
		for i := range 10 {
			r := s.check(t, s.gateKey, 500+i, "EUR")
			require.Equal(t, 200, r.status, "check %d: %s", i, r.body)
			assert.Equal(t, "allowed", r.decoded["decision"])
			assert.Equal(t, id, r.decoded["mandateId"])
			assert.Equal(t, "review", r.decoded["rule"], "the rule that would have asked a person")
			claims, err := verifier.Verify(r.decoded["decisionToken"].(string), []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","customer":"cus_1"}`, 500+i)))
			require.NoError(t, err)
			assert.Equal(t, id, claims.Mandate, "the token names the mandate")
			assert.Equal(t, []string{s.bob.ID}, claims.Deciders, "and its granter")
		}
		eleventh := s.check(t, s.gateKey, 700, "EUR")
		require.Equal(t, 202, eleventh.status, "the eleventh goes to a person: %s", eleventh.body)
		assert.Nil(t, eleventh.decoded["mandateId"])
		require.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.exhausted"), 1, "spent once")
		got := s.do(t, "GET", "/api/v1/mandates/"+id, s.bobToken, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		assert.Equal(t, "exhausted", got.decoded["status"])
		assert.Equal(t, 10.0, got.decoded["uses"])
		assert.Equal(t, map[string]any{"count": 0.0, "sum": nil}, got.decoded["remaining"])

		// What it does not cover asks a person: another currency, another
		// agent.
		require.NoError(t, db.Exec("DELETE FROM mandate_uses").Error) // a new window
		assert.Equal(t, 202, s.check(t, s.gateKey, 500, "USD").status, "the condition")
		assert.Equal(t, 202, s.check(t, s.agentKey, 500, "EUR").status, "another agent key")
		assert.Equal(t, 200, s.check(t, s.gateKey, 100, "EUR").status, "the policy's own allow needs no mandate")
		assert.Equal(t, 403, s.check(t, s.gateKey, 6000, "EUR").status, "a deny rule comes first")

		// A sum budget, over the amounts of the whole mandate.
		sum := s.grant(t, s.bobToken, `"budget":{"sum":{"field":"amount","max":1000},"window":"mandate"},"condition":"input.currency == \"USD\""`)
		require.Equal(t, 201, sum.status, string(sum.body))
		sumID := sum.decoded["id"].(string)
		assert.Equal(t, 200, s.check(t, s.agentKey, 600, "USD").status, "every agent key by default")
		assert.Equal(t, 202, s.check(t, s.gateKey, 600, "USD").status, "600 more is over 1000")
		assert.Equal(t, 200, s.check(t, s.gateKey, 400, "USD").status, "400 is within")
		spent := s.do(t, "GET", "/api/v1/mandates/"+sumID, s.adminKey, "", nil)
		assert.Equal(t, "exhausted", spent.decoded["status"], string(spent.body))
		assert.Equal(t, map[string]any{"count": nil, "sum": 0.0}, spent.decoded["remaining"])

		// Revocation takes effect on the next check.
		assert.Equal(t, 200, s.check(t, s.gateKey, 500, "EUR").status)
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", s.otherAdmin, "", nil).status, "another organisation's")
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", s.agentKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", s.cyToken, "", nil).status, "a member revokes their own")
		revoked := s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", s.bobToken, "", nil)
		require.Equal(t, 200, revoked.status, string(revoked.body))
		assert.Equal(t, "revoked", revoked.decoded["status"])
		assert.Equal(t, map[string]any{"id": s.bob.ID, "name": "Bob"}, revoked.decoded["revokedBy"])
		assert.Equal(t, 202, s.check(t, s.gateKey, 500, "EUR").status, "the next check asks a person")
		assert.Equal(t, 409, s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", s.adminKey, "", nil).status, "once")
		require.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.revoked"), 1)
		var data map[string]any
		require.NoError(t, json.Unmarshal(eventsOfKind(t, db, s.org.ID, "mandate.revoked")[0].Data, &data))
		assert.Equal(t, id, data["id"])
		assert.Equal(t, "http://assent.test/mandates#"+id, data["url"])

		// Who sees which: a member their own, administrators the
		// organisation's; agents none.
		assert.Len(t, s.do(t, "GET", "/api/v1/mandates", s.bobToken, "", nil).decoded["data"], 2)
		assert.Len(t, s.do(t, "GET", "/api/v1/mandates", s.adminKey, "", nil).decoded["data"], 2)
		assert.Len(t, s.do(t, "GET", "/api/v1/mandates?live=true", s.adminKey, "", nil).decoded["data"], 1)
		assert.Len(t, s.do(t, "GET", "/api/v1/mandates", s.cyToken, "", nil).decoded["data"], 0)
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/mandates/"+id, s.cyToken, "", nil).status)
		assert.Equal(t, 403, s.do(t, "GET", "/api/v1/mandates", s.agentKey, "", nil).status)
		assert.Equal(t, 400, s.do(t, "GET", "/api/v1/mandates?live=yes", s.adminKey, "", nil).status)
		assert.Len(t, s.do(t, "GET", "/api/v1/mandates", s.otherAdmin, "", nil).decoded["data"], 0)

		// Grants, uses and revocations are in the audit chain.
		var entries []models.AuditEntry
		require.NoError(t, db.Where("organization_id = ? AND subject_type = ?", s.org.ID, "mandate").Order("position").Find(&entries).Error)
		var steps []string
		for _, e := range entries {
			steps = append(steps, e.Action)
		}
		assert.Equal(t, []string{"granted", "exhausted", "granted", "exhausted", "revoked"}, steps)
		var uses int64
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("organization_id = ? AND subject_type = ? AND detail LIKE ?", s.org.ID, "gate_check", "%mandate "+id+" granted by Bob%").Count(&uses).Error)
		assert.EqualValues(t, 11, uses, "each use names the mandate")
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))
	})
}

// TestMandateBudgetUnderConcurrency: fifty concurrent checks against a
// budget of ten allow exactly ten; the others go to a person.
func TestMandateBudgetUnderConcurrency(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		require.Equal(t, 201, s.grant(t, s.bobToken, `"budget":{"count":10,"window":"mandate"}`).status)
		statuses := make([]int, 50)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() { statuses[i] = s.check(t, s.gateKey, 200+i, "EUR").status })
		}
		wg.Wait()
		counted := map[int]int{}
		for _, st := range statuses {
			counted[st]++
		}
		assert.Equal(t, map[int]int{200: 10, 202: 40}, counted)
		var uses int64
		require.NoError(t, db.Model(&models.MandateUse{}).Count(&uses).Error)
		assert.EqualValues(t, 10, uses)
		assert.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.exhausted"), 1)
		assert.False(t, strings.Contains(fmt.Sprint(statuses), "500"))
	})
}

// TestGateKeySentTwiceAtOnce: each key of a gate check a mandate covers,
// sent twice at once, is answered twice with one outcome (allowed with its
// token, or an approval raised once the budget is spent), never a 404.
func TestGateKeySentTwiceAtOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		require.Equal(t, 201, s.grant(t, s.bobToken, `"budget":{"count":5,"window":"mandate"}`).status)
		const keys = 10
		answers := make([][2]response, keys)
		var wg sync.WaitGroup
		for i := range keys {
			body := fmt.Sprintf(`{"action":"refund.create","input":{"amount":%d,"currency":"EUR","customer":"cus_1"}}`, 200+i)
			for j := range 2 {
				wg.Go(func() {
					answers[i][j] = s.sendAsClient(t, "/api/v1/gate", s.gateKey, body, fmt.Sprintf("twice-%d", i))
				})
			}
		}
		wg.Wait()
		counted := map[int]int{}
		for i, pair := range answers {
			assert.Contains(t, []int{200, 202}, pair[0].status, "key %d: %s", i, pair[0].body)
			assert.Equal(t, pair[0].status, pair[1].status, "key %d: %s / %s", i, pair[0].body, pair[1].body)
			assert.Equal(t, string(pair[0].body), string(pair[1].body), "key %d", i)
			counted[pair[0].status]++
		}
		assert.Equal(t, map[int]int{200: 5, 202: 5}, counted, "each key spent the budget or raised an approval once")
		var uses, raised int64
		require.NoError(t, db.Model(&models.MandateUse{}).Count(&uses).Error)
		require.NoError(t, db.Model(&approvals.Approval{}).Count(&raised).Error)
		assert.EqualValues(t, 5, uses)
		assert.EqualValues(t, 5, raised)
	})
}

// TestMandateEvidence: a flow whose check a mandate allowed exports the
// mandate, its grant and the use on its timeline, and the executor's
// receipt for the mandate's token; the export verifies.
func TestMandateEvidence(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		granted := s.grant(t, s.bobToken, `"budget":{"count":2,"window":"week"}`)
		require.Equal(t, 201, granted.status, string(granted.body))
		id := granted.decoded["id"].(string)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Refunds"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)
		input := `{"amount":300,"currency":"EUR","customer":"cus_9"}`
		check := s.do(t, "POST", "/api/v1/gate", s.gateKey, `{"action":"refund.create","input":`+input+`,"flowId":"`+flowID+`"}`, nil)
		require.Equal(t, 200, check.status, string(check.body))
		receipt := fmt.Sprintf(`{"decisionToken":%q,"input":%s,"outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:06Z"}`,
			check.decoded["decisionToken"], input)
		first := s.do(t, "POST", "/api/v1/receipts", s.gateKey, receipt, nil)
		require.Equal(t, 201, first.status, string(first.body))
		assert.Equal(t, 409, s.do(t, "POST", "/api/v1/receipts", s.gateKey, receipt, nil).status, "a mandate's token is single-use")

		ev := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.agentKey, "", nil)
		require.Equal(t, 200, ev.status, string(ev.body))
		types := map[string][]string{}
		for _, rq := range ev.decoded["requests"].([]any) {
			req := rq.(map[string]any)
			types[req["type"].(string)] = append(types[req["type"].(string)], req["id"].(string))
		}
		assert.Equal(t, []string{id}, types["mandate"])
		assert.Len(t, types["gate_check"], 1)
		assert.Len(t, types["receipt"], 1)
		var steps []string
		for _, en := range ev.decoded["timeline"].([]any) {
			e := en.(map[string]any)
			steps = append(steps, fmt.Sprintf("%s %s", e["requestType"], e["action"]))
			if e["requestType"] == "gate_check" {
				assert.Contains(t, e["detail"], "mandate "+id+" granted by Bob")
			}
		}
		assert.Equal(t, []string{"mandate granted", "flow created", "gate_check allowed", "receipt executed"}, steps)
		keys, err := evidence.ParseKeys(s.do(t, "GET", "/.well-known/assent/evidence-keys", "", "", nil).body)
		require.NoError(t, err)
		_, err = evidence.Verify(ev.body, keys)
		assert.NoError(t, err)
	})
}

// mandateSteps are the actions of a mandate's audit entries, in order.
func mandateSteps(t *testing.T, db *gorm.DB, id string) []string {
	t.Helper()
	var steps []string
	require.NoError(t, db.Model(&models.AuditEntry{}).Where("subject_type = ? AND subject_id = ?", "mandate", id).
		Order("position").Pluck("action", &steps).Error)
	return steps
}

// moveMandate sets a mandate's times, as the clock passing them would.
func moveMandate(t *testing.T, db *gorm.DB, id string, startsAt, expiresAt time.Time) {
	t.Helper()
	require.NoError(t, db.Model(&models.Mandate{}).Where("id = ?", id).
		Updates(map[string]any{"starts_at": startsAt, "expires_at": expiresAt}).Error)
}

// TestMandateSumSpent: a sum budget spent is a bound: a use that would
// spend nothing is not covered once nothing is left, and the mandate is
// exhausted once, not at every such use.
func TestMandateSumSpent(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		// Credits may be of nothing, so that a check may spend 0.
		credit := `{"name":"credit.grant","inputSchema":{"type":"object","required":["amount"],"properties":{"amount":{"type":"number","minimum":0}}},
			"policy":[{"name":"review","outcome":"approval","risk":"medium","approvers":["Finance"]}]}`
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, credit, nil).status)
		expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		granted := s.do(t, "POST", "/api/v1/mandates", s.bobToken,
			`{"action":"credit.grant","expiresAt":"`+expires+`","budget":{"sum":{"field":"amount","max":100},"window":"mandate"}}`, nil)
		require.Equal(t, 201, granted.status, string(granted.body))
		id := granted.decoded["id"].(string)
		check := func(amount int) response {
			return s.do(t, "POST", "/api/v1/gate", s.gateKey, fmt.Sprintf(`{"action":"credit.grant","input":{"amount":%d}}`, amount), nil)
		}

		zero := check(0)
		require.Equal(t, 200, zero.status, "nothing spent of a budget with some left: %s", zero.body)
		all := check(100)
		require.Equal(t, 200, all.status, string(all.body))
		assert.Equal(t, id, all.decoded["mandateId"])
		for i := range 2 {
			r := check(0)
			require.Equal(t, 202, r.status, "use %d after the sum is spent asks a person: %s", i, r.body)
			assert.Nil(t, r.decoded["mandateId"])
		}
		got := s.do(t, "GET", "/api/v1/mandates/"+id, s.bobToken, "", nil)
		assert.Equal(t, "exhausted", got.decoded["status"])
		assert.Equal(t, 2.0, got.decoded["uses"])
		assert.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.exhausted"), 1)
		assert.Equal(t, []string{"granted", "exhausted"}, mandateSteps(t, db, id))
	})
}

// TestMandateTimes: a mandate allows nothing before it starts or once it
// has expired: the next check asks a person, and its status says why.
func TestMandateTimes(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		now := time.Now().UTC()
		expired := s.grant(t, s.bobToken, `"budget":{"count":5,"window":"day"}`)
		require.Equal(t, 201, expired.status, string(expired.body))
		id := expired.decoded["id"].(string)
		require.Equal(t, 200, s.check(t, s.gateKey, 500, "EUR").status, "live, it allows")
		moveMandate(t, db, id, now.Add(-2*time.Hour), now.Add(-time.Minute))
		r := s.check(t, s.gateKey, 500, "EUR")
		require.Equal(t, 202, r.status, "expired, the next check asks a person: %s", r.body)
		assert.Nil(t, r.decoded["mandateId"])
		got := s.do(t, "GET", "/api/v1/mandates/"+id, s.bobToken, "", nil)
		assert.Equal(t, "expired", got.decoded["status"], string(got.body))
		assert.Empty(t, s.do(t, "GET", "/api/v1/mandates?live=true", s.bobToken, "", nil).decoded["data"])

		scheduled := s.grant(t, s.bobToken, `"budget":{"count":5,"window":"day"},"startsAt":"`+now.Add(time.Hour).Format(time.RFC3339)+`"`)
		require.Equal(t, 201, scheduled.status, string(scheduled.body))
		later := scheduled.decoded["id"].(string)
		assert.Equal(t, "scheduled", scheduled.decoded["status"])
		r = s.check(t, s.gateKey, 500, "EUR")
		require.Equal(t, 202, r.status, "not yet started, the check asks a person: %s", r.body)
		assert.Nil(t, r.decoded["mandateId"])
		assert.Equal(t, "scheduled", s.do(t, "GET", "/api/v1/mandates/"+later, s.bobToken, "", nil).decoded["status"])

		// Once its start has come, it allows.
		moveMandate(t, db, later, now.Add(-time.Minute), now.Add(24*time.Hour))
		r = s.check(t, s.gateKey, 500, "EUR")
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, later, r.decoded["mandateId"])
	})
}

// TestMandateRevokeEnded: revoking a mandate already revoked or expired
// is invalid_state and writes nothing: no audit entry, no event.
func TestMandateRevokeEnded(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		ctx := context.Background()
		grant := func() string {
			r := s.grant(t, s.bobToken, `"budget":{"count":5,"window":"day"}`)
			require.Equal(t, 201, r.status, string(r.body))
			return r.decoded["id"].(string)
		}
		revoke := func(id, key string) response {
			return s.do(t, "POST", "/api/v1/mandates/"+id+"/revoke", key, "", nil)
		}

		revoked := grant()
		require.Equal(t, 200, revoke(revoked, s.bobToken).status)
		again := revoke(revoked, s.adminKey)
		require.Equal(t, 409, again.status, string(again.body))
		assert.Equal(t, "invalid_state", errField(again, "code"))
		assert.Contains(t, errField(again, "message"), "was revoked at")

		now := time.Now().UTC()
		expired := grant()
		moveMandate(t, db, expired, now.Add(-2*time.Hour), now.Add(-time.Minute))
		late := revoke(expired, s.bobToken)
		require.Equal(t, 409, late.status, string(late.body))
		assert.Equal(t, "invalid_state", errField(late, "code"))
		assert.Contains(t, errField(late, "message"), "expired at")
		got := s.do(t, "GET", "/api/v1/mandates/"+expired, s.bobToken, "", nil)
		assert.Equal(t, "expired", got.decoded["status"])
		assert.Nil(t, got.decoded["revokedAt"])

		assert.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.revoked"), 1, "the first revocation only")
		assert.Equal(t, []string{"granted", "revoked"}, mandateSteps(t, db, revoked))
		assert.Equal(t, []string{"granted"}, mandateSteps(t, db, expired))
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))
	})
}

// TestMandateEvidenceOtherFlows: a mandate two flows used is on both
// flows' timelines, its exhaustion included, but neither flow's export
// names the other's check.
func TestMandateEvidenceOtherFlows(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		granted := s.grant(t, s.bobToken, `"budget":{"count":2,"window":"week"}`)
		require.Equal(t, 201, granted.status, string(granted.body))
		checkIn := func(title string) (flowID, checkID string) {
			flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"`+title+`"}`, nil)
			require.Equal(t, 201, flow.status, string(flow.body))
			flowID = flow.decoded["id"].(string)
			check := s.do(t, "POST", "/api/v1/gate", s.gateKey, `{"action":"refund.create","input":{"amount":300,"currency":"EUR","customer":"cus_9"},"flowId":"`+flowID+`"}`, nil)
			require.Equal(t, 200, check.status, string(check.body))
			return flowID, check.decoded["checkId"].(string)
		}
		first, firstCheck := checkIn("Refunds, morning")
		second, secondCheck := checkIn("Refunds, afternoon") // spends the last of the budget
		require.Len(t, eventsOfKind(t, db, s.org.ID, "mandate.exhausted"), 1)

		for _, c := range []struct{ flow, own, other string }{{first, firstCheck, secondCheck}, {second, secondCheck, firstCheck}} {
			ev := s.do(t, "GET", "/api/v1/flows/"+c.flow+"/evidence", s.agentKey, "", nil)
			require.Equal(t, 200, ev.status, string(ev.body))
			assert.Contains(t, string(ev.body), c.own)
			assert.NotContains(t, string(ev.body), c.other, "flow %s's export names another flow's check", c.flow)
			var steps []string
			for _, en := range ev.decoded["timeline"].([]any) {
				e := en.(map[string]any)
				steps = append(steps, fmt.Sprintf("%s %s", e["requestType"], e["action"]))
			}
			assert.Contains(t, steps, "mandate exhausted", "the mandate's exhaustion is on each flow that used it")
		}
	})
}

// TestMandateGrantRefusals: what TestGrantableFrom holds without a
// database, through the API: a mandate is refused for an action whose
// approvals an organisation rule makes need two, whose policy never asks
// a person, or whose approvers cannot be resolved.
func TestMandateGrantRefusals(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		ctx := context.Background()
		count10 := `"budget":{"count":10,"window":"day"}`
		grant := func(action string) response {
			expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
			return s.do(t, "POST", "/api/v1/mandates", s.bobToken, `{"action":"`+action+`","expiresAt":"`+expires+`",`+count10+`}`, nil)
		}
		refused := func(r response, status int, code, says string) {
			t.Helper()
			require.Equal(t, status, r.status, string(r.body))
			assert.Equal(t, code, errField(r, "code"))
			assert.Equal(t, "action", errField(r, "field"))
			assert.Contains(t, errField(r, "message"), says)
		}

		// An organisation rule making every approval need two.
		rule := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, `{"name":"four eyes","kind":"approval","requiredApprovals":2}`, nil)
		require.Equal(t, 201, rule.status, string(rule.body))
		refused(grant("refund.create"), 403, "forbidden", `the organisation rule "four eyes" makes every approval need 2 approvals`)
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/admin/rules/"+rule.decoded["id"].(string), s.adminKey, "", nil).status)

		// An action that never asks a person.
		ping := `{"name":"ping.send","inputSchema":{"type":"object"},"policy":[{"name":"always","outcome":"allow"}]}`
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, ping, nil).status)
		refused(grant("ping.send"), 400, "invalid_request", "never asks a person")

		// Approvers who can no longer be resolved: one has left.
		eli, err := s.store.CreateMember(ctx, s.org.ID, "eli@example.com", "Eli", models.RoleMember)
		require.NoError(t, err)
		payout := `{"name":"payout.create","inputSchema":{"type":"object"},"policy":[{"name":"treasury","outcome":"approval","risk":"medium","approvers":["Finance","eli@example.com"]}]}`
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, payout, nil).status)
		require.Equal(t, 201, grant("payout.create").status, "grantable while Eli is a member")
		inactive := false
		testenv.ChangeMember(t, s.store, s.org.ID, eli.ID, func(m *models.Member) { m.Active = inactive })
		refused(grant("payout.create"), 403, "forbidden", `rule "treasury" names approvers who cannot be resolved`)
	})
}

// TestMandateGranterDemoted: a mandate stands within its granter's
// authority at each use: once the granter is no longer an administrator,
// the next check asks a person, and once restored it is covered again.
func TestMandateGranterDemoted(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		granted := s.grant(t, s.bobToken, `"budget":{"count":10,"window":"day"}`)
		require.Equal(t, 201, granted.status, string(granted.body))
		id := granted.decoded["id"].(string)
		require.Equal(t, 200, s.check(t, s.gateKey, 500, "EUR").status)

		role := func(r string) {
			res := s.do(t, "PATCH", "/api/v1/admin/members/"+s.bob.ID, s.adminKey, `{"role":"`+r+`"}`, nil)
			require.Equal(t, 200, res.status, string(res.body))
		}
		role("member")
		r := s.check(t, s.gateKey, 500, "EUR")
		require.Equal(t, 202, r.status, "a member may not grant here, nor decide high risk alone: %s", r.body)
		assert.Nil(t, r.decoded["mandateId"])
		assert.Equal(t, "active", s.do(t, "GET", "/api/v1/mandates/"+id, s.adminKey, "", nil).decoded["status"], "the mandate stands; its granter's authority does not")

		role("admin")
		r = s.check(t, s.gateKey, 500, "EUR")
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, id, r.decoded["mandateId"])
	})
}

// TestDelegatesGrantNoMandates: with the owner and the administrator
// away to Cy, a plain member, Cy decides the owners' request on their
// behalf, but a standing mandate for their action is refused: standing in
// lends one decision, never the authority to approve in advance. Ada,
// back, grants it in her own right.
func TestDelegatesGrantNoMandates(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"membersMayGrantMandates":true}`, nil).status)
		restart := `{"name":"ops.restart","inputSchema":{"type":"object"},"policy":[{"name":"owners","outcome":"approval","risk":"medium"}]}`
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, restart, nil).status)
		s.delegate(t, s.memberToken, "cy@example.com")
		s.delegate(t, s.bobToken, "cy@example.com")
		expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		grant := fmt.Sprintf(`{"action":"ops.restart","expiresAt":%q,"budget":{"count":10,"window":"day"}}`, expires)

		raised := s.do(t, "POST", "/api/v1/gate", s.gateKey, `{"action":"ops.restart","input":{}}`, nil)
		require.Equal(t, 202, raised.status, string(raised.body))
		id := raised.decoded["approval"].(map[string]any)["id"].(string)
		a := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		assert.Equal(t, []string{"cy@example.com"}, emailsOf(a.decoded["resolvedApprovers"]), "Cy stands in for both")

		refused := s.do(t, "POST", "/api/v1/mandates", s.cyToken, grant, nil)
		require.Equal(t, 403, refused.status, string(refused.body))
		assert.Equal(t, "forbidden", errField(refused, "code"))
		assert.Contains(t, errField(refused, "message"), "is asked only in place of")
		mine := s.do(t, "GET", "/api/v1/mandates", s.cyToken, "", nil)
		require.Equal(t, 200, mine.status, string(mine.body))
		require.Contains(t, mine.decoded, "data")
		assert.Empty(t, mine.decoded["data"], "nothing granted")

		decided := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, decided.status, string(decided.body))
		assert.NotEmpty(t, decided.decoded["decidedOnBehalfOfId"], "Cy decides the one request on their behalf")

		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/me/delegation", s.memberToken, "", nil).status)
		own := s.do(t, "POST", "/api/v1/mandates", s.memberToken, grant, nil)
		require.Equal(t, 201, own.status, string(own.body))
	})
}

// TestMandateSumCaseVariant: a sum budget is over its field as written.
// Spending nothing beside a case variant of it ({"amount":0,"Amount":
// 100000}, which a Go executor reads as 100000) is refused, and the
// variant alone is no amount, so the mandate does not cover it: a person
// decides, and the budget is untouched.
func TestMandateSumCaseVariant(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateStack(t, db)
		credit := `{"name":"credit.grant","inputSchema":{"type":"object","properties":{"amount":{"type":"number","minimum":0}}},
			"policy":[{"name":"review","outcome":"approval","risk":"medium","approvers":["Finance"]}]}`
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, credit, nil).status)
		expires := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		granted := s.do(t, "POST", "/api/v1/mandates", s.bobToken,
			`{"action":"credit.grant","expiresAt":"`+expires+`","budget":{"sum":{"field":"amount","max":100},"window":"mandate"}}`, nil)
		require.Equal(t, 201, granted.status, string(granted.body))
		id := granted.decoded["id"].(string)
		for range 3 {
			r := s.do(t, "POST", "/api/v1/gate", s.gateKey, `{"action":"credit.grant","input":{"amount":0,"Amount":100000}}`, nil)
			require.Equal(t, 400, r.status, string(r.body))
			assert.Equal(t, "input.Amount", errField(r, "field"))
		}
		alone := s.do(t, "POST", "/api/v1/gate", s.gateKey, `{"action":"credit.grant","input":{"AMOUNT":100000}}`, nil)
		require.Equal(t, 202, alone.status, string(alone.body))
		assert.Nil(t, alone.decoded["mandateId"])
		got := s.do(t, "GET", "/api/v1/mandates/"+id, s.bobToken, "", nil)
		assert.Equal(t, 0.0, got.decoded["uses"])
		assert.Equal(t, map[string]any{"count": nil, "sum": 100.0}, got.decoded["remaining"])
	})
}
