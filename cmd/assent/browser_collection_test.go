package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// TestBrowserCollectionEndToEnd is issue 15's end-to-end test on assent
// dev: an agent asks two people seven typed questions with a callback,
// both answer on the page in a real browser, the agent's long-poll returns
// the collection complete with every answer typed, and the callback
// receiver verifies the signed collection.completed.
func TestBrowserCollectionEndToEnd(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	apiURL, boot, _, stop := startDemo(t)
	defer stop()
	type post struct {
		event, signature string
		body             []byte
	}
	received := make(chan post, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- post{r.Header.Get("Assent-Event"), r.Header.Get("Assent-Signature"), body}
	}))
	defer rcv.Close()

	var created struct {
		ID             string `json:"id"`
		CallbackSecret string `json:"callbackSecret"`
	}
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/collections", boot.AgentKey, fmt.Sprintf(`{"title":"Vendor onboarding",
		"respondents":["mia@example.com","max@example.com"],"callbackUrl":%q,
		"questions":[{"id":"name","prompt":"Vendor name","kind":"text"},
		             {"id":"notes","prompt":"Notes","kind":"long_text"},
		             {"id":"budget","prompt":"Budget in EUR","kind":"number"},
		             {"id":"start","prompt":"Start date","kind":"date"},
		             {"id":"tier","prompt":"Tier","kind":"choice","options":["Gold","Silver"]},
		             {"id":"regions","prompt":"Regions","kind":"multi_choice","options":["EU","US","APAC"]},
		             {"id":"nda","prompt":"NDA signed?","kind":"boolean"}]}`, rcv.URL+"/callback"), &created))
	require.NotEmpty(t, created.CallbackSecret)

	polled, endPoll := longPoll[map[string]any](t, apiURL+"/api/v1/collections/"+created.ID+"?wait=60s", boot.AgentKey)
	defer endPoll()

	answer := func(email, name, notes, budget, start, tier, region, nda string) {
		b := browsertest.New(t)
		signInFromDevMail(t, b, apiURL, email)
		b.Navigate(apiURL + "/collections/" + created.ID)
		b.CheckAccessibility("the answer form")
		b.Run(
			chromedp.SendKeys(chromedp.CSS(`#q-name`), name),
			chromedp.SendKeys(chromedp.CSS(`#q-notes`), notes),
			chromedp.SendKeys(chromedp.CSS(`#q-budget`), budget),
			chromedp.SetValue(chromedp.CSS(`#q-start`), start),
			chromedp.Click(chromedp.CSS(`input[name="answer.tier"][value="`+tier+`"]`)),
			chromedp.Click(chromedp.CSS(`input[name="answer.regions"][value="`+region+`"]`)),
			chromedp.Click(chromedp.CSS(`input[name="answer.nda"][value="`+nda+`"]`)),
		)
		b.ClickAndWait(`button[value="submit"]`)
		assert.Contains(t, b.Text("main"), "Your reply")
	}
	answer("mia@example.com", "Acme GmbH", "Two offices.", "12345678901234567890", "2027-01-31", "Gold", "EU", "true")
	answer("max@example.com", "Globex", "One office.", "80.50", "2027-02-01", "Silver", "APAC", "false")

	got := polled()
	require.Equal(t, "complete", got["status"], "%v", got)
	replies := got["replies"].([]any)
	require.Len(t, replies, 2)
	byEmail := map[string]map[string]any{}
	for _, r := range replies {
		r := r.(map[string]any)
		byEmail[r["respondent"].(map[string]any)["email"].(string)] = r["answers"].(map[string]any)
	}
	mia := byEmail["mia@example.com"]
	assert.Equal(t, "Acme GmbH", mia["name"])
	assert.Equal(t, "Two offices.", mia["notes"])
	assert.Equal(t, "2027-01-31", mia["start"])
	assert.Equal(t, "Gold", mia["tier"])
	assert.Equal(t, []any{"EU"}, mia["regions"])
	assert.Equal(t, true, mia["nda"])
	assert.IsType(t, float64(0), mia["budget"], "a number comes back a JSON number")
	assert.Equal(t, false, byEmail["max@example.com"]["nda"])
	assert.Equal(t, 80.5, byEmail["max@example.com"]["budget"])

	select {
	case p := <-received:
		assert.Equal(t, "collection.completed", p.event)
		require.NoError(t, webhook.Verify(p.signature, p.body, created.CallbackSecret, time.Now(), webhook.DefaultTolerance))
		var env struct {
			RequestType string `json:"requestType"`
			RequestID   string `json:"requestId"`
			Data        struct{ Status string }
		}
		require.NoError(t, json.Unmarshal(p.body, &env))
		assert.Equal(t, "collection", env.RequestType)
		assert.Equal(t, created.ID, env.RequestID)
		assert.Equal(t, "complete", env.Data.Status)
		assert.Contains(t, string(p.body), `"budget":12345678901234567890`, "the exact number reaches the callback")
	case <-time.After(30 * time.Second):
		t.Fatal("the callback receiver got nothing")
	}
}
