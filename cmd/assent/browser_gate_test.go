package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// gatedRefund is the action the agent registers: small refunds run, huge
// ones are refused, the rest go to a person who may correct the amount
// within the schema.
const gatedRefund = `{"name":"refund.create","description":"Refund a customer",
  "inputSchema":{"type":"object","required":["amount","currency","customer"],"additionalProperties":false,
    "properties":{"amount":{"type":"number","exclusiveMinimum":0,"maximum":1000},"currency":{"enum":["EUR","USD"]},"customer":{"type":"string"}}},
  "editableFields":["amount"],
  "policy":[
    {"name":"small","condition":"input.amount <= 50","outcome":"allow"},
    {"name":"huge","condition":"input.amount > 900","outcome":"deny","reason":"refunds over 900 go through finance"},
    {"name":"review","outcome":"approval","risk":"medium","approvers":[%q]}]}`

// TestBrowserGate is issue 19's "done when" on assent dev: an agent
// registers an action with a schema and calls the gate three times —
// allowed with a decision token, denied with gate.denied reaching a
// webhook, and approval required; a person approves the third on its page
// with a correction the schema accepts (after one it refuses); the agent
// verifies the decision token against approvedInput; and the flow's
// evidence export verifies with `assent evidence verify`, and fails once
// one byte is changed.
func TestBrowserGate(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	delivered := make(chan []byte, 4)
	var secret string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if webhook.Verify(r.Header.Get(events.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance) == nil {
			delivered <- raw
		}
	}))
	defer recv.Close()
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()

	var hook struct{ Secret string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey,
		fmt.Sprintf(`{"url":%q,"events":["gate.denied"]}`, recv.URL+"/hook"), &hook))
	secret = hook.Secret
	var action map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/actions", boot.AdminKey, fmt.Sprintf(gatedRefund, admin.Email), &action), "%v", action)
	var flow struct{ ID string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/flows", boot.AgentKey, `{"title":"Refund run 7"}`, &flow))
	gate := func(input string, into any) int {
		return postJSON(t, apiURL+"/api/v1/gate", boot.AgentKey, fmt.Sprintf(`{"action":"refund.create","input":%s,"flowId":%q}`, input, flow.ID), into)
	}
	var jwks json.RawMessage
	require.Equal(t, 200, getJSON(t, apiURL+"/.well-known/jwks.json", "", &jwks))
	verifier, err := decisiontoken.NewVerifier(jwks, apiURL, boot.OrganizationID)
	require.NoError(t, err)

	// 1. Allowed, with a token for exactly this input.
	var allowed struct{ Decision, DecisionToken string }
	require.Equal(t, 200, gate(`{"amount":20,"currency":"EUR","customer":"cus_1"}`, &allowed))
	assert.Equal(t, "allowed", allowed.Decision)
	_, err = verifier.Verify(allowed.DecisionToken, []byte(`{"amount":20,"currency":"EUR","customer":"cus_1"}`))
	require.NoError(t, err)

	// 2. Denied, and the webhook hears of it.
	var denied map[string]any
	require.Equal(t, 403, gate(`{"amount":950,"currency":"EUR","customer":"cus_2"}`, &denied))
	assert.Equal(t, "gate_denied", denied["error"].(map[string]any)["code"])
	select {
	case raw := <-delivered:
		var env struct {
			Event string
			Data  map[string]any
		}
		require.NoError(t, json.Unmarshal(raw, &env))
		assert.Equal(t, "gate.denied", env.Event)
		assert.Equal(t, "refunds over 900 go through finance", env.Data["reason"])
		assert.Equal(t, "refund.create", env.Data["action"])
	case <-time.After(30 * time.Second):
		t.Fatal("gate.denied never reached the webhook")
	}

	// 3. Approval required: a person corrects and approves on the page.
	var raised struct {
		Decision string
		Approval struct{ ID, URL string }
	}
	proposed := `{"amount":400,"currency":"EUR","customer":"cus_3"}`
	require.Equal(t, 202, gate(proposed, &raised))
	assert.Equal(t, "approval_required", raised.Decision)
	b := browsertest.New(t)
	signInFromDevMail(t, b, apiURL, admin.Email)
	b.ClickAndWait(`a[href="/approvals/` + raised.Approval.ID + `"]`)
	assert.Contains(t, b.Text("main"), "The action gate raised this for refund.create")
	b.Run(chromedp.SetValue(chromedp.CSS("#field-amount"), "4000"))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Text(".problem"), "Amount must be at most 1,000.", "the schema refuses a correction over its maximum")
	b.Run(chromedp.SetValue(chromedp.CSS("#field-amount"), "250"), chromedp.SendKeys(chromedp.CSS("#note"), "Partial refund."))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Text(".settled"), "By "+admin.Name)

	// The agent's long-poll returns the approval with its token, which
	// holds for approvedInput and for nothing else.
	var got struct {
		Status        string
		ApprovedInput json.RawMessage
		DecisionToken string
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+raised.Approval.ID+"?wait=30s", boot.AgentKey, &got))
	require.Equal(t, "approved", got.Status)
	assert.JSONEq(t, `{"amount":250,"currency":"EUR","customer":"cus_3"}`, string(got.ApprovedInput))
	claims, err := verifier.Verify(got.DecisionToken, got.ApprovedInput)
	require.NoError(t, err)
	assert.Equal(t, "refund.create", claims.Action)
	_, err = verifier.Verify(got.DecisionToken, []byte(proposed))
	assert.ErrorIs(t, err, decisiontoken.ErrInput, "the proposed input was not what was approved")

	// The flow's evidence verifies offline, and not after one byte changes.
	req, _ := http.NewRequest("GET", apiURL+"/api/v1/flows/"+flow.ID+"/evidence", nil)
	req.Header.Set("Authorization", "Bearer "+boot.AgentKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	export, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, string(export))
	for _, step := range []string{`"action":"allowed"`, `"action":"denied"`, `"action":"approval_required"`, `"action":"approved"`} {
		assert.Contains(t, string(export), step, "the timeline holds every gate check and the decision")
	}
	file := filepath.Join(t.TempDir(), "evidence.json")
	require.NoError(t, os.WriteFile(file, export, 0o600))
	var out bytes.Buffer
	require.NoError(t, runEvidence(context.Background(), []string{"verify", file, "--url", apiURL}, &out, io.Discard))
	assert.Contains(t, out.String(), "verifies")
	at := strings.Index(string(export), `"action":"denied"`) + len(`"action":"d`)
	tampered := bytes.Clone(export)
	tampered[at] = 'E' // "denied" becomes "dEnied"
	require.NoError(t, os.WriteFile(file, tampered, 0o600))
	err = runEvidence(context.Background(), []string{"verify", file, "--url", apiURL}, io.Discard, io.Discard)
	require.Error(t, err, "one byte changed")
	assert.Contains(t, err.Error(), "timeline[")
}
