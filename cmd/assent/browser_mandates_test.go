package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// TestBrowserStandingApprovals is issue 38's "done when" on assent dev: a
// person grants a mandate from an approval page; the agent's next ten gate
// checks are allowed with tokens naming the mandate and the eleventh goes
// to a person; a revocation takes effect on the next check; an executor
// posts a matching receipt and a mismatching one, and the mismatch reaches
// a webhook; a member away delegates to another, who approves in their own
// name on behalf of the first, and the flow's evidence export shows both.
func TestBrowserStandingApprovals(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	delivered := make(chan map[string]any, 32)
	var secret string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var env map[string]any
		if webhook.Verify(r.Header.Get(events.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance) == nil &&
			json.Unmarshal(raw, &env) == nil {
			delivered <- env
		}
	}))
	defer recv.Close()
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	heard := func(kind string) map[string]any {
		t.Helper()
		for {
			select {
			case env := <-delivered:
				if env["event"] == kind {
					return env["data"].(map[string]any)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s never reached the webhook", kind)
				return nil
			}
		}
	}

	var hook struct{ Secret string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey,
		fmt.Sprintf(`{"url":%q,"events":["mandate.granted","mandate.exhausted","mandate.revoked","execution.mismatch"]}`, recv.URL+"/hook"), &hook))
	secret = hook.Secret
	var action map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/actions", boot.AdminKey, fmt.Sprintf(gatedRefund, admin.Email), &action), "%v", action)
	var flow struct{ ID string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/flows", boot.AgentKey, `{"title":"Refund run 8"}`, &flow))
	type answer struct {
		Decision, DecisionToken, MandateID string
		Approval                           struct{ ID string }
	}
	gate := func(amount int) (int, answer) {
		var a answer
		status := postJSON(t, apiURL+"/api/v1/gate", boot.AgentKey,
			fmt.Sprintf(`{"action":"refund.create","input":{"amount":%d,"currency":"EUR","customer":"cus_3"},"flowId":%q}`, amount, flow.ID), &a)
		return status, a
	}
	var jwks json.RawMessage
	require.Equal(t, 200, getJSON(t, apiURL+"/.well-known/jwks.json", "", &jwks))
	verifier, err := decisiontoken.NewVerifier(jwks, apiURL, boot.OrganizationID)
	require.NoError(t, err)

	// 1. A person approves, and approves similar requests for a day.
	status, raised := gate(400)
	require.Equal(t, 202, status)
	b := browsertest.New(t)
	signInFromDevMail(t, b, apiURL, admin.Email)
	b.Navigate(apiURL + "/approvals/" + raised.Approval.ID)
	b.Run(chromedp.Click(chromedp.CSS("#mandate")), chromedp.SetValue(chromedp.CSS("#mandate-count"), "10"))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Location(), "/mandates?done=mandate-granted#mdt_")
	granted := heard("mandate.granted")
	mandateID := granted["id"].(string)
	assert.Equal(t, raised.Approval.ID, granted["approvalId"])
	assert.Equal(t, map[string]any{"id": admin.ID, "name": admin.Name}, granted["grantedBy"])

	// 2. Ten similar checks are allowed by it, the eleventh asks a person.
	var tokens []string
	for i := range 10 {
		status, a := gate(100 + i)
		require.Equal(t, 200, status, "check %d", i)
		assert.Equal(t, mandateID, a.MandateID)
		claims, err := verifier.Verify(a.DecisionToken, []byte(fmt.Sprintf(`{"amount":%d,"currency":"EUR","customer":"cus_3"}`, 100+i)))
		require.NoError(t, err)
		assert.Equal(t, mandateID, claims.Mandate)
		assert.Equal(t, []string{admin.ID}, claims.Deciders)
		tokens = append(tokens, a.DecisionToken)
	}
	status, eleventh := gate(120)
	assert.Equal(t, 202, status)
	assert.Equal(t, "approval_required", eleventh.Decision)
	assert.Equal(t, mandateID, heard("mandate.exhausted")["id"])

	// 3. Revoked, a mandate allows nothing more from the next check.
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var second struct{ ID string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/mandates", admin.Token,
		fmt.Sprintf(`{"action":"refund.create","budget":{"count":5,"window":"day"},"expiresAt":%q}`, expires), &second))
	status, _ = gate(130)
	assert.Equal(t, 200, status)
	var revoked struct{ Status string }
	require.Equal(t, 200, postJSON(t, apiURL+"/api/v1/mandates/"+second.ID+"/revoke", admin.Token, ``, &revoked))
	assert.Equal(t, "revoked", revoked.Status)
	status, _ = gate(131)
	assert.Equal(t, 202, status, "the next check asks a person")
	assert.Equal(t, second.ID, heard("mandate.revoked")["id"])

	// 4. Receipts: what ran matches one token and not another.
	receipt := func(token string, amount int) (int, map[string]any) {
		var out map[string]any
		return postJSON(t, apiURL+"/api/v1/receipts", boot.AgentKey, fmt.Sprintf(`{"decisionToken":%q,"input":{"amount":%d,"currency":"EUR","customer":"cus_3"},
			"outcome":"succeeded","result":{"refund":"re_1"},"startedAt":"2026-01-02T15:04:05Z","finishedAt":"2026-01-02T15:04:06Z"}`, token, amount), &out), out
	}
	status, matched := receipt(tokens[0], 100)
	require.Equal(t, 201, status, "%v", matched)
	assert.Equal(t, true, matched["inputMatches"])
	status, mismatched := receipt(tokens[1], 999)
	require.Equal(t, 409, status, "%v", mismatched)
	assert.Equal(t, "input_mismatch", mismatched["error"].(map[string]any)["code"])
	assert.Equal(t, mismatched["receipt"].(map[string]any)["id"], heard("execution.mismatch")["id"], "the mismatch reaches the webhook")

	// 5. Mia is away; Max stands in and approves on her behalf.
	mia, max := demoPerson{}, demoPerson{}
	for _, m := range boot.Members {
		switch m.Email {
		case "mia@example.com":
			mia = m
		case "max@example.com":
			max = m
		}
	}
	req, _ := http.NewRequest("PUT", apiURL+"/api/v1/me/delegation", strings.NewReader(
		fmt.Sprintf(`{"to":"max@example.com","until":%q,"note":"On holiday"}`, time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))))
	req.Header.Set("Authorization", "Bearer "+mia.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var asked struct {
		ID                string
		ResolvedApprovers []struct{ Email string }
	}
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey,
		fmt.Sprintf(`{"title":"Pay the vendor","approvers":["mia@example.com"],"flowId":%q}`, flow.ID), &asked))
	require.Len(t, asked.ResolvedApprovers, 1)
	assert.Equal(t, "max@example.com", asked.ResolvedApprovers[0].Email, "Max is asked instead")
	var decided map[string]any
	require.Equal(t, 200, postJSON(t, apiURL+"/api/v1/approvals/"+asked.ID+"/decision", max.Token, `{"decision":"approve"}`, &decided), "%v", decided)
	assert.Equal(t, max.Name, decided["decidedBy"])
	assert.Equal(t, mia.Name, decided["decidedOnBehalfOf"])

	// The flow's evidence holds the mandate, its uses, the receipts and
	// both names of the delegated decision, and verifies.
	var export struct {
		Requests []struct {
			Type, ID string
			Record   map[string]any
		}
		Timeline []struct{ Action, RequestType, Detail string }
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/flows/"+flow.ID+"/evidence", boot.AgentKey, &export))
	types := map[string]int{}
	for _, r := range export.Requests {
		types[r.Type]++
		if r.ID == asked.ID {
			assert.Equal(t, max.Name, r.Record["decidedBy"])
			assert.Equal(t, mia.Name, r.Record["decidedOnBehalfOf"])
		}
	}
	assert.Equal(t, 2, types["mandate"], "both mandates its checks used")
	assert.Equal(t, 2, types["receipt"])
	var byMandate int
	for _, e := range export.Timeline {
		if e.RequestType == "gate_check" && strings.Contains(e.Detail, "mandate "+mandateID) {
			byMandate++
		}
	}
	assert.Equal(t, 10, byMandate, "each use is on the timeline")
}
