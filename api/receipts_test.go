package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// receiptBody is a receipt's body for token and input (JSON).
func receiptBody(token, input, outcome, result string) string {
	return fmt.Sprintf(`{"decisionToken":%q,"input":%s,"outcome":%q,"result":%s,"startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:06.5Z"}`,
		token, input, outcome, result)
}

// TestReceipts: an approved approval's token takes one receipt, shown in
// the approval's read and counted by ?executed; a second is 409
// receipt_exists with the first. A gate check's token reported with
// another input is 409 input_mismatch, recorded all the same: on the
// flow's timeline, in its evidence export and as execution.mismatch to a
// webhook subscribed to every event.
func TestReceipts(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()
		hook := newReceiver(t, "whsec_all")
		_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL + "/hook", Format: models.FormatJSON,
			Enabled: true, Secret: "whsec_all"})
		require.NoError(t, err)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Refunds"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)

		// An approval approved by a person.
		a := s.create(t, s.agentKey, `{"title":"Refund","approvers":["cy@example.com"],"input":{"amount":100,"currency":"EUR"},"flowId":"`+flowID+`"}`)
		id := a["id"].(string)
		assert.Nil(t, a["execution"], "nothing ran yet")
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status)
		got := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		token := got.decoded["decisionToken"].(string)
		assert.Nil(t, got.decoded["execution"])
		listed := func(query string) []string {
			r := s.do(t, "GET", "/api/v1/approvals?"+query, s.agentKey, "", nil)
			require.Equal(t, 200, r.status, string(r.body))
			var out []string
			for _, d := range r.decoded["data"].([]any) {
				out = append(out, d.(map[string]any)["id"].(string))
			}
			return out
		}
		pending := s.create(t, s.agentKey, `{"title":"Other","approvers":["cy@example.com"]}`)["id"].(string)
		assert.Equal(t, []string{id}, listed("executed=false"), "approved, never reported; the pending one is not approved")
		assert.Empty(t, listed("executed=true"))
		assert.NotContains(t, listed("executed=false&status=pending"), pending)

		// Reported, the input spelled otherwise.
		r := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"currency":"EUR","amount":100.0}`, "succeeded", `{"refundId":"re_1"}`), nil)
		require.Equal(t, 201, r.status, string(r.body))
		receipt := r.decoded
		assert.True(t, ids.HasPrefix(receipt["id"].(string), ids.Receipt))
		assert.Equal(t, id, receipt["approvalId"])
		assert.Equal(t, flowID, receipt["flowId"])
		assert.Equal(t, true, receipt["inputMatches"])
		assert.Equal(t, "succeeded", receipt["outcome"])
		assert.Equal(t, map[string]any{"refundId": "re_1"}, receipt["result"])
		assert.Equal(t, "2026-01-02T15:04:06.500000Z", receipt["finishedAt"])
		assert.True(t, ids.HasPrefix(receipt["decisionTokenId"].(string), ids.TokenID))

		got = s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		execution := got.decoded["execution"].(map[string]any)
		assert.Equal(t, receipt["id"], execution["receiptId"])
		assert.Equal(t, "succeeded", execution["outcome"])
		assert.Equal(t, "2026-01-02T15:04:05.000000Z", execution["startedAt"])
		assert.Equal(t, receipt["reportedAt"], execution["reportedAt"])
		assert.Empty(t, listed("executed=false"))
		assert.Equal(t, []string{id}, listed("executed=true"))
		bad := s.do(t, "GET", "/api/v1/approvals?executed=yes", s.agentKey, "", nil)
		assert.Equal(t, 400, bad.status)
		assert.Equal(t, "executed", errField(bad, "field"))

		// A second receipt of the token saying the same: the first, unchanged,
		// named by its id and times only.
		second := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"amount":100,"currency":"EUR"}`, "succeeded", `"again"`), nil)
		assert.Equal(t, 409, second.status, string(second.body))
		assert.Equal(t, "receipt_exists", errField(second, "code"))
		assert.Equal(t, "decisionToken", errField(second, "field"))
		assert.Equal(t, map[string]any{"id": receipt["id"], "startedAt": receipt["startedAt"], "finishedAt": receipt["finishedAt"],
			"reportedAt": receipt["reportedAt"]}, second.decoded["receipt"])

		// An allowed gate check, then something else ran.
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}]}`, nil).status)
		check := func(input string) string {
			r := s.do(t, "POST", "/api/v1/gate", s.agentKey, `{"action":"deploy","input":`+input+`,"flowId":"`+flowID+`"}`, nil)
			require.Equal(t, 200, r.status, string(r.body))
			return r.decoded["decisionToken"].(string)
		}
		gated := check(`{"env":"staging"}`)
		m := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(gated, `{"env":"prod"}`, "succeeded", "null"), nil)
		require.Equal(t, 409, m.status, string(m.body))
		assert.Equal(t, "input_mismatch", errField(m, "code"))
		assert.Equal(t, "input", errField(m, "field"))
		mismatch := m.decoded["receipt"].(map[string]any)
		assert.Equal(t, false, mismatch["inputMatches"])
		assert.Equal(t, map[string]any{"env": "prod"}, mismatch["input"])
		assert.Equal(t, "deploy", mismatch["action"])
		assert.Nil(t, mismatch["approvalId"])
		assert.NotEqual(t, mismatch["inputSha256"], mismatch["approvedInputSha256"])
		// A later report of the approved input: the mismatch stays the
		// token's receipt, and the report that disagrees with it is kept.
		again := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(gated, `{"env":"staging"}`, "succeeded", "null"), nil)
		assert.Equal(t, "receipt_exists", errField(again, "code"), "the mismatch was the token's receipt")
		assert.Equal(t, mismatch["id"], again.decoded["receipt"].(map[string]any)["id"])

		waitFor(t, func() bool { return len(slicesOf(hook.events(), "execution.mismatch")) == 2 })
		var sent []string
		for _, g := range hook.received() {
			if g.event == "execution.mismatch" {
				assert.NoError(t, g.verified)
				data := g.body["data"].(map[string]any)
				if data["disagreesWith"] == nil {
					sent = append(sent, "receipt "+data["id"].(string))
				} else {
					sent = append(sent, "later report of "+data["disagreesWith"].(string))
					assert.Equal(t, map[string]any{"env": "staging"}, data["input"], "%s", g.raw)
				}
			}
		}
		assert.ElementsMatch(t, []string{"receipt " + mismatch["id"].(string), "later report of " + mismatch["id"].(string)}, sent)

		// The flow's timeline and evidence hold both.
		f := s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil)
		var steps []string
		for _, st := range f.decoded["timeline"].([]any) {
			step := st.(map[string]any)
			if step["subjectType"] == "receipt" {
				steps = append(steps, step["action"].(string)+" "+step["subjectId"].(string))
				if step["action"] == "execution_mismatch" {
					assert.Regexp(t, "is not the one approved|a later report", step["detail"])
				}
			}
		}
		assert.Equal(t, []string{"executed " + receipt["id"].(string), "execution_mismatch " + mismatch["id"].(string),
			"execution_mismatch " + mismatch["id"].(string)}, steps, "the mismatch, then the later report that disagrees with it")
		ev := s.do(t, "GET", "/api/v1/flows/"+flowID+"/evidence", s.agentKey, "", nil)
		require.Equal(t, 200, ev.status, string(ev.body))
		var inExport []string
		for _, rq := range ev.decoded["requests"].([]any) {
			req := rq.(map[string]any)
			if req["type"] == "receipt" {
				inExport = append(inExport, req["id"].(string))
			}
			if req["id"] == id {
				assert.Equal(t, receipt["id"], req["record"].(map[string]any)["execution"].(map[string]any)["receiptId"])
			}
		}
		assert.ElementsMatch(t, []string{receipt["id"].(string), mismatch["id"].(string)}, inExport)
		assert.Contains(t, string(ev.body), `"requestType":"receipt"`, "the receipts' timeline entries")
		keys, err := evidence.ParseKeys(s.do(t, "GET", "/.well-known/assent/evidence-keys", "", "", nil).body)
		require.NoError(t, err)
		_, err = evidence.Verify(ev.body, keys)
		assert.NoError(t, err)
	})
}

// TestReceiptRefusals: a token not this instance's, of another
// organisation, expired, or without a jti is refused naming decisionToken;
// a result over 64 KB is 413 naming result; the body's own rules name
// their fields.
func TestReceiptRefusals(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}]}`, nil).status)
		gate := s.do(t, "POST", "/api/v1/gate", s.agentKey, `{"action":"deploy","input":{"env":"prod"}}`, nil)
		require.Equal(t, 200, gate.status, string(gate.body))
		token, checkID := gate.decoded["decisionToken"].(string), gate.decoded["checkId"].(string)

		sum, err := decisiontoken.InputSHA256([]byte(`{"env":"prod"}`))
		require.NoError(t, err)
		now := time.Now().UTC().Truncate(time.Second)
		signed := func(edit func(*decisiontoken.Claims)) string {
			c := decisiontoken.Claims{Issuer: "http://assent.test", Subject: checkID, Organization: s.org.ID, Action: "deploy",
				InputSHA256: sum, Deciders: []string{}, IssuedAt: now, Expiry: now.Add(time.Hour), ID: ids.New(ids.TokenID)}
			edit(&c)
			tok, err := s.store.SignDecision(ctx, c)
			require.NoError(t, err)
			return tok
		}
		other, err := accounts.New(s.store).Authenticate(ctx, s.otherAgent)
		require.NoError(t, err)
		parts := strings.Split(token, ".")
		sig := []byte(parts[2])
		sig[10] = map[bool]byte{true: 'B', false: 'A'}[sig[10] == 'A']
		tampered := parts[0] + "." + parts[1] + "." + string(sig)
		for name, tc := range map[string]struct{ token, says string }{
			"expired":                  {signed(func(c *decisiontoken.Claims) { c.IssuedAt, c.Expiry = now.Add(-2*time.Hour), now.Add(-time.Hour) }), "expired"},
			"another organisation's":   {signed(func(c *decisiontoken.Claims) { c.Organization = other.Organization.ID }), "another organisation"},
			"another instance's":       {signed(func(c *decisiontoken.Claims) { c.Issuer = "https://elsewhere.example" }), "another instance"},
			"a bad signature":          {tampered, "not signed by this instance"},
			"not a token":              {"not-a-token", "not a decision token"},
			"issued before receipts":   {signed(func(c *decisiontoken.Claims) { c.ID = "" }), "no jti"},
			"naming no record of ours": {signed(func(c *decisiontoken.Claims) { c.Subject = ids.New(ids.Approval) }), "does not have"},
		} {
			r := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(tc.token, `{"env":"prod"}`, "succeeded", "null"), nil)
			assert.Equal(t, 400, r.status, "%s: %s", name, r.body)
			assert.Equal(t, "decisionToken", errField(r, "field"), name)
			assert.Contains(t, errField(r, "message"), tc.says, name)
		}
		r := s.do(t, "POST", "/api/v1/receipts", s.otherAgent, receiptBody(token, `{"env":"prod"}`, "succeeded", "null"), nil)
		assert.Equal(t, 400, r.status, "another organisation's caller: %s", r.body)
		assert.Contains(t, errField(r, "message"), "another organisation")

		big := fmt.Sprintf("%q", strings.Repeat("x", 64<<10))
		r = s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"env":"prod"}`, "failed", big), nil)
		assert.Equal(t, 413, r.status, string(r.body))
		assert.Equal(t, "content_too_large", errField(r, "code"))
		assert.Equal(t, "result", errField(r, "field"))
		for field, body := range map[string]string{
			"finishedAt": `{"decisionToken":"` + token + `","input":{},"outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:04Z"}`,
			"input":      `{"decisionToken":"` + token + `","input":[1],"outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:05Z"}`,
			"outcome":    `{"decisionToken":"` + token + `","input":{},"outcome":"done","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:05Z"}`,
			"startedAt":  `{"decisionToken":"` + token + `","input":{},"outcome":"succeeded","startedAt":"yesterday","finishedAt":"2026-01-02T15:04:05Z"}`,
		} {
			r := s.do(t, "POST", "/api/v1/receipts", s.agentKey, body, nil)
			assert.Equal(t, 400, r.status, "%s: %s", field, r.body)
			assert.Equal(t, field, errField(r, "field"))
		}
		missing := s.do(t, "POST", "/api/v1/receipts", s.agentKey, `{"decisionToken":"`+token+`","outcome":"succeeded","startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:05Z"}`, nil)
		assert.Equal(t, "input", errField(missing, "field"), "input is required, null or not")

		// Nothing refused took the token: it still takes its receipt.
		r = s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"env":"prod"}`, "failed", `{"error":"timeout"}`), nil)
		assert.Equal(t, 201, r.status, string(r.body))
	})
}

// slicesOf is the entries of all equal to v.
func slicesOf(all []string, v string) []string {
	var out []string
	for _, s := range all {
		if s == v {
			out = append(out, s)
		}
	}
	return out
}

// TestReceiptsOnlyFromWhoMayReport: a token's receipt comes from who it
// was issued to or a key its action names among its executors. Another key
// of the organisation holding the token is refused 403 and takes nothing,
// so the rightful executor's report is still the receipt; receipt_exists
// names the receipt by its id and times only; a later report of the
// rightful executor that disagrees with the receipt is kept as
// execution_mismatch and execution.mismatch, once however often it is sent.
func TestReceiptsOnlyFromWhoMayReport(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		newKey := func(name string) (string, string) {
			k, secret, err := s.store.CreateKey(ctx, s.org.ID, name, models.KeyAgent, []string{scopes.ReceiptsWrite, scopes.GateCheck})
			require.NoError(t, err)
			return k.ID, secret
		}
		_, third := newKey("third")
		executorID, executor := newKey("executor")

		// An approval the agent key asked for: a third key and a member who
		// did not ask are refused, whatever they say ran.
		a := s.create(t, s.agentKey, `{"title":"Refund","approvers":["cy@example.com"],"input":{"amount":100}}`)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/approvals/"+a["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status)
		token := s.do(t, "GET", "/api/v1/approvals/"+a["id"].(string), s.agentKey, "", nil).decoded["decisionToken"].(string)
		for name, key := range map[string]string{"a third key": third, "a named executor of no action": executor, "a member token": s.memberToken} {
			r := s.do(t, "POST", "/api/v1/receipts", key, receiptBody(token, `{"amount":100}`, "succeeded", "null"), nil)
			assert.Equal(t, 403, r.status, "%s: %s", name, r.body)
			assert.Equal(t, "forbidden", errField(r, "code"), name)
			assert.Contains(t, errField(r, "message"), "issued to", name)
		}
		// The requester's own report, another input: its receipt, a mismatch.
		r := s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"amount":900}`, "succeeded", "null"), nil)
		require.Equal(t, 409, r.status, string(r.body))
		assert.Equal(t, "input_mismatch", errField(r, "code"), "the rightful executor's receipt was taken after the third key tried")

		// An allowed gate check of an action that names its executor.
		bad := s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}],"executors":["`+executorID+`","key_nope"]}`, nil)
		assert.Equal(t, 400, bad.status, string(bad.body))
		assert.Equal(t, "executors[1]", errField(bad, "field"))
		admin, err := accounts.New(s.store).Authenticate(ctx, s.adminKey)
		require.NoError(t, err)
		bad = s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"executors":["`+admin.Key.ID+`"]}`, nil)
		assert.Equal(t, "executors[0]", errField(bad, "field"), "an admin key runs nothing: %s", bad.body)
		action := s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}],"executors":["`+executorID+`","`+executorID+`"]}`, nil)
		require.Equal(t, 201, action.status, string(action.body))
		assert.Equal(t, []any{executorID}, action.decoded["executors"])
		gate := s.do(t, "POST", "/api/v1/gate", s.agentKey, `{"action":"deploy","input":{"env":"prod"}}`, nil)
		require.Equal(t, 200, gate.status, string(gate.body))
		gated := gate.decoded["decisionToken"].(string)
		r = s.do(t, "POST", "/api/v1/receipts", third, receiptBody(gated, `{"env":"prod"}`, "succeeded", "null"), nil)
		assert.Equal(t, 403, r.status, string(r.body))
		assert.Contains(t, errField(r, "message"), "executors")
		r = s.do(t, "POST", "/api/v1/receipts", executor, receiptBody(gated, `{"env":"prod"}`, "succeeded", `{"secret":"only-the-executor-sees-this"}`), nil)
		require.Equal(t, 201, r.status, string(r.body))
		receipt := r.decoded

		// The requester says it failed: receipt_exists, without what ran or
		// its result, and the disagreement kept.
		mismatches := func() (entries []models.AuditEntry, evs []models.Event) {
			require.NoError(t, db.Where("subject_id = ? AND action = ?", receipt["id"], "execution_mismatch").Find(&entries).Error)
			require.NoError(t, db.Where("subject_id = ? AND kind = ?", receipt["id"], "execution.mismatch").Find(&evs).Error)
			return entries, evs
		}
		for range 2 {
			r = s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(gated, `{"env":"prod"}`, "failed", `"timeout"`), nil)
			require.Equal(t, 409, r.status, string(r.body))
			assert.Equal(t, "receipt_exists", errField(r, "code"))
			assert.Equal(t, map[string]any{"id": receipt["id"], "startedAt": receipt["startedAt"], "finishedAt": receipt["finishedAt"],
				"reportedAt": receipt["reportedAt"]}, r.decoded["receipt"])
			assert.NotContains(t, string(r.body), "only-the-executor-sees-this")
		}
		entries, evs := mismatches()
		require.Len(t, entries, 1, "the same report again is kept once")
		assert.Contains(t, entries[0].Detail, "a later report by agent")
		assert.Contains(t, entries[0].Detail, "says failed")
		require.Len(t, evs, 1)
		assert.Contains(t, string(evs[0].Data), `"disagreesWith":"`+receipt["id"].(string)+`"`)
		assert.Contains(t, string(evs[0].Data), `"outcome":"failed"`)

		// The same input and outcome again: nothing more to keep.
		r = s.do(t, "POST", "/api/v1/receipts", executor, receiptBody(gated, `{"env":"prod"}`, "succeeded", "null"), nil)
		assert.Equal(t, "receipt_exists", errField(r, "code"))
		entries, _ = mismatches()
		assert.Len(t, entries, 1)
	})
}

// TestReceiptRetriedAfterItsTokenExpired: a report recorded as a mismatch
// (409 input_mismatch, which is not kept as a response) and retried with
// its Idempotency-Key after its token expired answers as it did, with the
// receipt it recorded, rather than refusing the token; the same body
// without the key is refused as expired, and nothing is recorded twice.
func TestReceiptRetriedAfterItsTokenExpired(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}]}`, nil).status)
		gate := s.do(t, "POST", "/api/v1/gate", s.agentKey, `{"action":"deploy","input":{"env":"staging"}}`, nil)
		require.Equal(t, 200, gate.status, string(gate.body))
		body := receiptBody(gate.decoded["decisionToken"].(string), `{"env":"prod"}`, "succeeded", "null")
		key := map[string]string{"Idempotency-Key": "report-deploy"}

		first := s.do(t, "POST", "/api/v1/receipts", s.agentKey, body, key)
		require.Equal(t, 409, first.status, string(first.body))
		require.Equal(t, "input_mismatch", errField(first, "code"))
		id := first.decoded["receipt"].(map[string]any)["id"]

		s.services.Receipts.SetClock(func() time.Time { return time.Now().Add(48 * time.Hour) })
		again := s.do(t, "POST", "/api/v1/receipts", s.agentKey, body, key)
		assert.Equal(t, 409, again.status, string(again.body))
		assert.Equal(t, "input_mismatch", errField(again, "code"))
		assert.Equal(t, "input", errField(again, "field"))
		assert.Equal(t, first.decoded["receipt"], again.decoded["receipt"], "the receipt the first attempt recorded")

		unkeyed := s.do(t, "POST", "/api/v1/receipts", s.agentKey, body, nil)
		assert.Equal(t, 400, unkeyed.status, string(unkeyed.body))
		assert.Contains(t, errField(unkeyed, "message"), "expired")
		var n int64
		require.NoError(t, db.Model(&models.Receipt{}).Where("organization_id = ?", s.org.ID).Count(&n).Error)
		assert.EqualValues(t, 1, n, "recorded once: %v", id)
	})
}

// TestReceiptsSentAtOnce: six reports of one token at once, half saying it
// succeeded and half that it failed, take one receipt; the others are 409
// receipt_exists, and the reports that disagree with the receipt are kept
// once (one execution_mismatch entry), never a 5xx.
func TestReceiptsSentAtOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		require.Equal(t, 201, s.do(t, "POST", "/api/v1/admin/actions", s.adminKey,
			`{"name":"deploy","inputSchema":{"type":"object"},"policy":[{"name":"all","outcome":"allow"}]}`, nil).status)
		gate := s.do(t, "POST", "/api/v1/gate", s.agentKey, `{"action":"deploy","input":{"env":"staging"}}`, nil)
		require.Equal(t, 200, gate.status, string(gate.body))
		token := gate.decoded["decisionToken"].(string)

		results := make([]response, 6)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			outcome := []string{"succeeded", "failed"}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i] = s.do(t, "POST", "/api/v1/receipts", s.agentKey, receiptBody(token, `{"env":"staging"}`, outcome, "null"), nil)
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		for _, r := range results {
			switch {
			case r.status == 201:
				created++
			case r.status == 409 && errField(r, "code") == "receipt_exists":
			default:
				t.Errorf("unexpected response %d %s", r.status, r.body)
			}
		}
		assert.Equal(t, 1, created, "one receipt")
		count := func(action string) (n int64) {
			require.NoError(t, db.Model(&models.AuditEntry{}).Where("organization_id = ? AND subject_type = ? AND action = ?",
				s.org.ID, "receipt", action).Count(&n).Error)
			return n
		}
		assert.EqualValues(t, 1, count("executed"))
		assert.EqualValues(t, 1, count("execution_mismatch"), "the three that disagree are one report, kept once")
		var n int64
		require.NoError(t, db.Model(&models.Event{}).Where("organization_id = ? AND kind = ?", s.org.ID, "execution.mismatch").Count(&n).Error)
		assert.EqualValues(t, 1, n)
	})
}
