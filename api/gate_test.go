package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// refundAction is the action the gate tests register: refunds up to 100
// run, people may allow up to 1000, over 5000 is refused, the rest goes to
// Finance; a person may correct the amount, within the schema.
const refundAction = `{
  "name": "refund.create",
  "description": "Refund a customer",
  "inputSchema": {
    "type": "object",
    "required": ["amount", "currency", "customer"],
    "additionalProperties": false,
    "properties": {
      "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000},
      "currency": {"enum": ["EUR", "USD"]},
      "customer": {"type": "string", "minLength": 1},
      "note": {"type": "string"}
    }
  },
  "editableFields": ["amount", "note"],
  "policy": [
    {"name": "small", "condition": "input.amount <= 100", "outcome": "allow"},
    {"name": "people", "condition": "caller.kind == \"member\" && input.amount <= 1000", "outcome": "allow"},
    {"name": "huge", "condition": "input.amount > 5000", "outcome": "deny", "reason": "refunds over 5000 go through the finance system"},
    {"name": "review", "outcome": "approval", "risk": "high", "approvers": ["Finance"], "expiresIn": "2h"}
  ]
}`

func TestActionsAdmin(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		with := func(edit func(map[string]any)) string {
			var a map[string]any
			require.NoError(t, json.Unmarshal([]byte(refundAction), &a))
			edit(a)
			b, _ := json.Marshal(a)
			return string(b)
		}
		rule := func(i int, a map[string]any) map[string]any { return a["policy"].([]any)[i].(map[string]any) }
		cases := []struct {
			name, body  string
			status      int
			code, field string
		}{
			{"name characters", with(func(a map[string]any) { a["name"] = "refund create" }), 400, "invalid_request", "name"},
			{"schema missing", with(func(a map[string]any) { delete(a, "inputSchema") }), 400, "invalid_request", "inputSchema"},
			{"schema not JSON Schema", with(func(a map[string]any) { a["inputSchema"] = map[string]any{"type": "objekt"} }), 400, "invalid_request", "inputSchema"},
			{"schema reaching out", with(func(a map[string]any) { a["inputSchema"] = map[string]any{"$ref": "file:///etc/passwd"} }), 400, "invalid_request", "inputSchema"},
			{"editable field not declared", with(func(a map[string]any) { a["editableFields"] = []string{"amount", "iban"} }), 400, "invalid_request", "editableFields[1]"},
			{"condition that does not compile", with(func(a map[string]any) { rule(1, a)["condition"] = "input.amount >" }), 400, "invalid_request", "policy[1].condition"},
			{"condition over what does not exist", with(func(a map[string]any) { rule(0, a)["condition"] = `request.risk == "high"` }), 400, "invalid_request", "policy[0].condition"},
			{"condition not a bool", with(func(a map[string]any) { rule(0, a)["condition"] = "input.amount" }), 400, "invalid_request", "policy[0].condition"},
			{"outcome", with(func(a map[string]any) { rule(0, a)["outcome"] = "maybe" }), 400, "invalid_request", "policy[0].outcome"},
			{"reason on an allow", with(func(a map[string]any) { rule(0, a)["reason"] = "why" }), 400, "invalid_request", "policy[0].reason"},
			{"approvers on a deny", with(func(a map[string]any) { rule(2, a)["approvers"] = []string{"Finance"} }), 400, "invalid_request", "policy[2].approvers"},
			{"expiry", with(func(a map[string]any) { rule(3, a)["expiresIn"] = "soon" }), 400, "invalid_request", "policy[3].expiresIn"},
			{"unknown approver", with(func(a map[string]any) { rule(3, a)["approvers"] = []string{"nobody@example.com"} }), 400, "unknown_approver", "policy[3].approvers"},
			{"token lifetime", with(func(a map[string]any) { a["decisionTokenTtlSeconds"] = 5 }), 400, "invalid_request", "decisionTokenTtlSeconds"},
			{"unknown field", with(func(a map[string]any) { a["owner"] = "me" }), 400, "invalid_request", "owner"},
		}
		for _, c := range cases {
			r := f.do(t, "POST", "/api/v1/admin/actions", f.adminKey, c.body, nil)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
		}

		assert.Equal(t, 403, f.do(t, "POST", "/api/v1/admin/actions", f.agentKey, refundAction, nil).status, "agents do not register actions")
		ok := with(func(a map[string]any) { delete(rule(3, a), "approvers") })
		created := f.do(t, "POST", "/api/v1/admin/actions", f.adminKey, ok, nil)
		require.Equal(t, 201, created.status, string(created.body))
		id := created.decoded["id"].(string)
		assert.Equal(t, "2h", rule(3, created.decoded)["expiresIn"])
		assert.Equal(t, 409, f.do(t, "POST", "/api/v1/admin/actions", f.adminKey, ok, nil).status, "names are unique")

		changed := with(func(a map[string]any) {
			delete(rule(3, a), "approvers")
			a["description"], a["decisionTokenTtlSeconds"] = "Refund, changed", 600
		})
		put := f.do(t, "PUT", "/api/v1/admin/actions/"+id, f.adminKey, changed, nil)
		require.Equal(t, 200, put.status, string(put.body))
		assert.Equal(t, 600.0, put.decoded["decisionTokenTtlSeconds"])
		got := f.do(t, "GET", "/api/v1/admin/actions/"+id, f.adminKey, "", nil)
		assert.Equal(t, "Refund, changed", got.decoded["description"])
		assert.Len(t, f.do(t, "GET", "/api/v1/admin/actions", f.adminKey, "", nil).decoded["data"], 1)

		assert.Equal(t, 404, f.do(t, "GET", "/api/v1/admin/actions/"+id, f.otherAdmin, "", nil).status, "another organisation's action")
		assert.Equal(t, 404, f.do(t, "PUT", "/api/v1/admin/actions/"+id, f.otherAdmin, changed, nil).status)
		assert.Equal(t, 404, f.do(t, "DELETE", "/api/v1/admin/actions/"+id, f.otherAdmin, "", nil).status)
		assert.Equal(t, 204, f.do(t, "DELETE", "/api/v1/admin/actions/"+id, f.adminKey, "", nil).status)
		assert.Equal(t, 404, f.do(t, "GET", "/api/v1/admin/actions/"+id, f.adminKey, "", nil).status)
	})
}

func TestGate(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		action := strings.Replace(refundAction, `"editableFields"`, `"decisionTokenTtlSeconds": 900, "editableFields"`, 1)
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, action, nil).status)
		_, gateOnly, err := s.store.CreateKey(ctx, s.org.ID, "gatekeeper", "agent", []string{scopes.GateCheck})
		require.NoError(t, err)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Refund run"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)
		gate := func(key, input string, headers map[string]string) response {
			return s.do(t, "POST", "/api/v1/gate", key, fmt.Sprintf(`{"action":"refund.create","input":%s,"flowId":%q,"externalId":"run-1"}`, input, flowID), headers)
		}

		refusals := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"scope", s.readOnlyKey, `{"action":"refund.create","input":{}}`, 403, "insufficient_scope", ""},
			{"unknown action", gateOnly, `{"action":"refund.delete","input":{}}`, 404, "not_found", "action"},
			{"another organisation's action", s.otherAgent, `{"action":"refund.create","input":{"amount":1,"currency":"EUR","customer":"c"}}`, 404, "not_found", "action"},
			{"input not an object", gateOnly, `{"action":"refund.create","input":[1]}`, 400, "invalid_request", "input"},
			{"wrong type", gateOnly, `{"action":"refund.create","input":{"amount":"50","currency":"EUR","customer":"c"}}`, 400, "invalid_request", "input.amount"},
			{"missing property", gateOnly, `{"action":"refund.create","input":{"amount":50,"customer":"c"}}`, 400, "invalid_request", "input"},
			{"outside the enum", gateOnly, `{"action":"refund.create","input":{"amount":50,"currency":"GBP","customer":"c"}}`, 400, "invalid_request", "input.currency"},
			{"closed flow is named", gateOnly, `{"action":"refund.create","input":{"amount":50,"currency":"EUR","customer":"c"},"flowId":"flw_nope"}`, 400, "invalid_request", "flowId"},
		}
		for _, c := range refusals {
			r := s.do(t, "POST", "/api/v1/gate", c.key, c.body, nil)
			require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
			assert.Equal(t, c.code, errField(r, "code"), c.name)
			assert.Equal(t, c.field, errField(r, "field"), c.name)
		}
		assert.Contains(t, errField(s.do(t, "POST", "/api/v1/gate", gateOnly, refusals[4].body, nil), "message"), "want number")

		// Allowed by the first rule, and by the rule for people.
		allowed := gate(gateOnly, `{"amount":40,"currency":"EUR","customer":"cus_1"}`, nil)
		require.Equal(t, 200, allowed.status, string(allowed.body))
		assert.Equal(t, "allowed", allowed.decoded["decision"])
		assert.Equal(t, "small", allowed.decoded["rule"])
		assert.Nil(t, allowed.decoded["approval"])
		// Its decision token binds this input, this action and this
		// organisation, with nobody as decider, for the action's lifetime.
		jwks := s.do(t, "GET", "/.well-known/jwks.json", "", "", nil)
		require.Equal(t, 200, jwks.status, string(jwks.body))
		verifier, err := decisiontoken.NewVerifier(jwks.body, "http://assent.test", s.org.ID)
		require.NoError(t, err)
		token := allowed.decoded["decisionToken"].(string)
		claims, err := verifier.Verify(token, []byte(`{"customer":"cus_1","currency":"EUR","amount":40.0}`))
		require.NoError(t, err, "the same input, however written")
		assert.Equal(t, "refund.create", claims.Action)
		assert.Equal(t, allowed.decoded["checkId"], claims.Subject)
		assert.Empty(t, claims.Deciders)
		assert.Equal(t, 900*time.Second, claims.Expiry.Sub(claims.IssuedAt), "the action's lifetime")
		_, err = verifier.Verify(token, []byte(`{"amount":41,"currency":"EUR","customer":"cus_1"}`))
		assert.ErrorIs(t, err, decisiontoken.ErrInput)
		_, err = verifier.VerifyAction(token, "refund.create", []byte(`{"amount":40,"currency":"EUR","customer":"cus_1"}`))
		assert.NoError(t, err)
		_, err = verifier.VerifyAction(token, "refund.delete", []byte(`{"amount":40,"currency":"EUR","customer":"cus_1"}`))
		assert.ErrorIs(t, err, decisiontoken.ErrAction, "not for another action")
		other, err := decisiontoken.NewVerifier(jwks.body, "http://assent.test", "org_other")
		require.NoError(t, err)
		_, err = other.Verify(token, []byte(`{"amount":40,"currency":"EUR","customer":"cus_1"}`))
		assert.ErrorIs(t, err, decisiontoken.ErrOrganization)
		replayed := gate(gateOnly, `{"amount":40,"currency":"EUR","customer":"cus_1"}`, map[string]string{"Idempotency-Key": "allow-1"})
		require.Equal(t, 200, replayed.status)
		assert.Equal(t, replayed.decoded["decisionToken"], gate(gateOnly, `{"amount":40,"currency":"EUR","customer":"cus_1"}`, map[string]string{"Idempotency-Key": "allow-1"}).decoded["decisionToken"], "a retry gets the same token")

		byPerson := gate(s.memberToken, `{"amount":500,"currency":"EUR","customer":"cus_1"}`, nil)
		require.Equal(t, 200, byPerson.status, string(byPerson.body))
		assert.Equal(t, "people", byPerson.decoded["rule"])

		// Denied: 403 with the reason, gate.denied once, even when retried.
		key := map[string]string{"Idempotency-Key": "deny-1"}
		for range 2 {
			denied := gate(gateOnly, `{"amount":6000,"currency":"EUR","customer":"cus_2"}`, key)
			require.Equal(t, 403, denied.status, string(denied.body))
			assert.Equal(t, "gate_denied", errField(denied, "code"))
			assert.Equal(t, `the policy rule "huge" denies it: refunds over 5000 go through the finance system`, errField(denied, "message"), "the rule, then its reason")
		}
		deniedEvents := eventsOfKind(t, db, s.org.ID, "gate.denied")
		require.Len(t, deniedEvents, 1, "a retry with the same key tells the webhook once")
		var data map[string]any
		require.NoError(t, json.Unmarshal(deniedEvents[0].Data, &data))
		assert.Equal(t, "refund.create", data["action"])
		assert.Equal(t, "denied", data["decision"])
		assert.Equal(t, "huge", data["rule"])
		assert.Equal(t, "refunds over 5000 go through the finance system", data["reason"])
		assert.Equal(t, map[string]any{"kind": "agent", "id": data["caller"].(map[string]any)["id"], "name": "gatekeeper"}, data["caller"])
		assert.Equal(t, flowID, data["flowId"])

		// Approval required: an ordinary approval to Finance, once per key.
		key = map[string]string{"Idempotency-Key": "review-1"}
		raised := gate(gateOnly, `{"amount":800,"currency":"EUR","customer":"cus_3","note":"late parcel"}`, key)
		require.Equal(t, 202, raised.status, string(raised.body))
		assert.Equal(t, "approval_required", raised.decoded["decision"])
		assert.Equal(t, "review", raised.decoded["rule"])
		approval := raised.decoded["approval"].(map[string]any)
		id := approval["id"].(string)
		assert.Equal(t, "/api/v1/approvals/"+id, raised.header.Get("Location"))
		assert.Equal(t, "refund.create", approval["action"])
		assert.Equal(t, "high", approval["risk"])
		assert.Equal(t, []any{"amount", "note"}, approval["editableFields"])
		assert.Equal(t, []any{"Finance"}, approval["approvers"])
		assert.Equal(t, flowID, approval["flowId"])
		again := gate(gateOnly, `{"amount":800,"currency":"EUR","customer":"cus_3","note":"late parcel"}`, key)
		require.Equal(t, 202, again.status, string(again.body))
		assert.Equal(t, id, again.decoded["approval"].(map[string]any)["id"], "a retry gets the same approval")
		assert.Equal(t, raised.decoded["checkId"], again.decoded["checkId"])
		waitFor(t, func() bool { return len(eventsOfKind(t, db, s.org.ID, "approval.requested")) == 1 })

		// A person's corrections stay within the action's schema.
		path := "/api/v1/approvals/" + id + "/decision"
		for _, c := range []struct{ body, field string }{
			{`{"decision":"approve","corrections":{"amount":20000}}`, "corrections.amount"},
			{`{"decision":"approve","corrections":{"amount":-5}}`, "corrections.amount"},
			{`{"decision":"approve","corrections":{"amount":"80"}}`, "corrections.amount"},
			{`{"decision":"approve","corrections":{"currency":"USD"}}`, "corrections.currency"},
			// Corrections the workflow refuses for what they are, not for
			// the schema (which has no "extra" and admits no 20000).
			{`{"decision":"approve","corrections":{"extra":"x"}}`, "corrections.extra"},
			{`{"decision":"reject","corrections":{"amount":20000}}`, "corrections"},
		} {
			r := s.do(t, "POST", path, s.bobToken, c.body, nil)
			require.Equal(t, 400, r.status, "%s: %s", c.body, r.body)
			assert.Equal(t, c.field, errField(r, "field"), c.body)
		}
		assert.Contains(t, errField(s.do(t, "POST", path, s.bobToken, `{"decision":"approve","corrections":{"amount":20000}}`, nil), "message"), "action's schema")
		ok := s.do(t, "POST", path, s.bobToken, `{"decision":"approve","corrections":{"amount":250}}`, nil)
		require.Equal(t, 200, ok.status, string(ok.body))
		var got map[string]any
		waitFor(t, func() bool {
			got = s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil).decoded
			return got["status"] == "approved"
		})
		assert.Equal(t, 250.0, got["approvedInput"].(map[string]any)["amount"])
		approvedInput, _ := json.Marshal(got["approvedInput"])
		claims, err = verifier.Verify(got["decisionToken"].(string), approvedInput)
		require.NoError(t, err, "the approval's token binds the corrected input")
		assert.Equal(t, "refund.create", claims.Action, "and names the gated action")
		assert.Equal(t, []string{s.bob.ID}, claims.Deciders)
		assert.Equal(t, 900*time.Second, claims.Expiry.Sub(claims.IssuedAt), "the action's lifetime")
		_, err = verifier.Verify(got["decisionToken"].(string), []byte(`{"amount":800,"currency":"EUR","customer":"cus_3","note":"late parcel"}`))
		assert.ErrorIs(t, err, decisiontoken.ErrInput, "not the input proposed")

		// Every check is on the flow's timeline, in the audit chain.
		timeline := s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil)
		require.Equal(t, 200, timeline.status, string(timeline.body))
		var actions []string
		for _, e := range timeline.decoded["timeline"].([]any) {
			entry := e.(map[string]any)
			if strings.HasPrefix(fmt.Sprint(entry["subjectId"]), "gck_") {
				actions = append(actions, entry["action"].(string))
			}
		}
		assert.Equal(t, []string{"allowed", "allowed", "allowed", "denied", "approval_required"}, actions, "the retried allow once")
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))

		// The policy fails closed: a deny whose condition cannot be
		// evaluated for this input hands it to a person, not to the allow
		// after it.
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, `{"name":"export.run","inputSchema":{"type":"object"},
			"policy":[{"name":"embargo","condition":"input.customer.country == \"KP\"","outcome":"deny","reason":"embargoed"},
			          {"name":"rest","outcome":"allow"}]}`, nil).status)
		closed := s.do(t, "POST", "/api/v1/gate", gateOnly, `{"action":"export.run","input":{"items":3}}`, nil)
		require.Equal(t, 202, closed.status, string(closed.body))
		assert.Equal(t, "embargo", closed.decoded["rule"])
		factors := closed.decoded["approval"].(map[string]any)["factors"].([]any)
		assert.Contains(t, factors[1].(map[string]any)["detail"], `the condition of rule "embargo" could not be evaluated`)
		open := s.do(t, "POST", "/api/v1/gate", gateOnly, `{"action":"export.run","input":{"customer":{"country":"FR"}}}`, nil)
		require.Equal(t, 200, open.status, string(open.body))
		assert.Equal(t, "rest", open.decoded["rule"])

		// A retry answers as the first attempt did, even once the action
		// is gone.
		created := s.do(t, "POST", "/api/v1/admin/actions", s.adminKey, `{"name":"wire.transfer","inputSchema":{"type":"object"}}`, nil)
		require.Equal(t, 201, created.status)
		key = map[string]string{"Idempotency-Key": "wire-1"}
		first := s.do(t, "POST", "/api/v1/gate", gateOnly, `{"action":"wire.transfer","input":{"to":"x"}}`, key)
		require.Equal(t, 202, first.status, string(first.body))
		require.Equal(t, 204, s.do(t, "DELETE", "/api/v1/admin/actions/"+created.decoded["id"].(string), s.adminKey, "", nil).status)
		// As a crash right after answering leaves it: the claim unfinished,
		// so the retry runs the check again.
		require.NoError(t, db.Exec("UPDATE idempotency_keys SET completed = ? WHERE idempotency_key = ?", false, "wire-1").Error)
		retried := s.do(t, "POST", "/api/v1/gate", gateOnly, `{"action":"wire.transfer","input":{"to":"x"}}`, key)
		require.Equal(t, 202, retried.status, string(retried.body))
		assert.Equal(t, first.decoded["approval"].(map[string]any)["id"], retried.decoded["approval"].(map[string]any)["id"])
		assert.Equal(t, first.decoded["checkId"], retried.decoded["checkId"])
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/gate", gateOnly, `{"action":"wire.transfer","input":{"to":"x"}}`, nil).status, "a new check")
	})
}

// eventsOfKind reads the organisation's outbox events of one kind.
func eventsOfKind(t *testing.T, db *gorm.DB, orgID, kind string) []models.Event {
	t.Helper()
	var out []models.Event
	require.NoError(t, db.Where("organization_id = ? AND kind = ?", orgID, kind).Order("id").Find(&out).Error)
	return out
}
