package main

import (
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
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// screenshotDir is where the browser test saves its screenshots: the
// README's under docs/screenshots when ASSENT_UPDATE_SCREENSHOTS=1, else a
// temporary folder.
func screenshotDir(t *testing.T) string {
	if os.Getenv("ASSENT_UPDATE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "..", "docs", "screenshots")
	}
	return t.TempDir()
}

// devMailMessage is an email as the dev mailbox lists it.
type devMailMessage struct {
	To      []string
	Subject string
	Text    string
	Links   []string
}

// devMail waits for the email to address whose subject starts with
// subject to reach the dev mailbox.
func devMail(t *testing.T, apiURL, address, subject string) devMailMessage {
	t.Helper()
	var found devMailMessage
	require.Eventually(t, func() bool {
		var mail []devMailMessage
		getJSON(t, apiURL+"/dev/mail.json", "", &mail)
		for _, m := range mail {
			if len(m.To) == 1 && m.To[0] == address && strings.HasPrefix(m.Subject, subject) {
				found = m
				return true
			}
		}
		return false
	}, 15*time.Second, 100*time.Millisecond, "no email %q to %s in the dev mailbox", subject, address)
	return found
}

// signInFromDevMail signs email in as a person does: the address typed on
// the sign-in page the app's address leads to, then the emailed link
// followed from the dev mailbox. It ends on the inbox.
func signInFromDevMail(t *testing.T, b *browsertest.Browser, apiURL, email string) {
	t.Helper()
	b.Navigate(apiURL + "/")
	assert.Contains(t, b.Location(), "/signin")
	b.Run(chromedp.SendKeys(chromedp.CSS("#email"), email))
	b.ClickAndWait(`form[action="/signin"] button`)
	assert.Contains(t, b.Text("main"), "Check your email")

	b.Navigate(devMail(t, apiURL, email, "Sign in to Assent").Links[0])
	b.ClickAndWait(`form[action="/signin/link"] button`)
	require.True(t, strings.HasSuffix(b.Location(), "/inbox"), b.Location())
}

// TestBrowserDecidesAnApproval is issue 5's "done when" in a real browser:
// on `assent dev`, an agent creates an approval with curl's request, a
// person signs in from the dev mailbox, opens it from the inbox, approves
// it with a correction, and the agent's GET shows the outcome.
func TestBrowserDecidesAnApproval(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	var created map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":"Refund <script>alert(1)</script> order 42",
		"description":"The customer was charged twice.","risk":"medium","approvers":[%q],
		"input":{"amount":120,"currency":"EUR"},"editableFields":["amount"],
		"factors":[{"label":"Duplicate charge found","status":"ok"}]}`, admin.Email), &created))
	id := created["id"].(string)
	assert.Equal(t, apiURL+"/approvals/"+id, created["url"], "the approval's url is its page")
	shots := screenshotDir(t)

	b := browsertest.New(t)
	b.Navigate(apiURL + "/signin")
	b.CheckAccessibility("the sign-in page")
	signInFromDevMail(t, b, apiURL, admin.Email)
	assert.Contains(t, b.Text("main"), "Refund <script>alert(1)</script> order 42", "the title is text, not markup")
	b.CheckAccessibility("the inbox")
	b.Screenshot(filepath.Join(shots, "inbox.png"))

	b.ClickAndWait(`a[href="/approvals/` + id + `"]`)
	assert.Contains(t, b.Text("h1"), "<script>")
	scripts, err := chromedp.Run(b.Context(), chromedp.Evaluate[int](`document.querySelectorAll("script").length`))
	require.NoError(t, err)
	assert.Zero(t, scripts, "no script element on the page")
	b.CheckAccessibility("the approval page")
	b.Screenshot(filepath.Join(shots, "approval.png"))

	b.Run(chromedp.SetValue(chromedp.CSS("#field-amount"), "100"), chromedp.SendKeys(chromedp.CSS("#note"), "Refund the duplicate only."))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Text(".settled"), "By "+admin.Name)
	b.CheckAccessibility("the decided approval")
	b.Screenshot(filepath.Join(shots, "decided.png"))

	var got map[string]any
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+id, boot.AgentKey, &got))
	assert.Equal(t, "approved", got["status"])
	assert.Equal(t, map[string]any{"amount": 100.0, "currency": "EUR"}, got["approvedInput"])
	assert.Equal(t, []any{map[string]any{"field": "amount", "from": 120.0, "to": 100.0}}, got["changes"])
}

// TestBrowserEmailLinks follows the approvers' emails in a real browser: a
// low-risk request's link decides without signing in and hides a
// restricted field; a form without its CSRF token changes nothing; a
// high-risk request's email leads to sign-in.
func TestBrowserEmailLinks(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	var rule map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/rules", boot.AdminKey,
		`{"name":"Hide bank details","kind":"restricted","fields":["iban"]}`, &rule), rule)

	var low map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":"Pay supplier 7",
		"risk":"low","approvers":[%q],"input":{"amount":120,"iban":"DE89370400440532013000"},"editableFields":["amount"]}`, admin.Email), &low))
	lowID := low["id"].(string)
	mail := devMail(t, apiURL, admin.Email, "Approval needed: Pay supplier 7")
	var link string
	for _, l := range mail.Links {
		if strings.Contains(l, "/approvals/"+lowID+"/link/") {
			link = l
		}
	}
	require.NotEmpty(t, link, "the email carries a sign-in-free link: %v", mail.Links)

	b := browsertest.New(t)
	b.Navigate(link)
	assert.Contains(t, b.Text("main"), "deciding as "+admin.Name)
	assert.NotContains(t, b.Text("main"), "DE89370400440532013000", "the restricted field is hidden")
	assert.Contains(t, b.Text("main"), "1 sensitive field is hidden")
	b.CheckAccessibility("the emailed link's page")

	// A form stripped of its token (as a forged cross-site post would be)
	// is refused and decides nothing.
	_, err := chromedp.Run(b.Context(), chromedp.Evaluate[bool](`document.querySelector("form.decision input[name=csrf]").remove(), true`))
	require.NoError(t, err)
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Text("main"), "This form has expired")
	b.CheckAccessibility("the error page")
	var got map[string]any
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+lowID, boot.AgentKey, &got))
	assert.Equal(t, "pending", got["status"])

	// Reject with a note, from the link, signed out.
	b.Navigate(link)
	b.Run(chromedp.SendKeys(chromedp.CSS("#note"), "Wrong supplier."))
	b.ClickAndWait(`button[value="reject"]`)
	assert.Contains(t, b.Text(".settled"), "Rejected")
	assert.Contains(t, b.Text("main"), "already been used")
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+lowID, boot.AgentKey, &got))
	assert.Equal(t, "rejected", got["status"])
	assert.Equal(t, "Wrong supplier.", got["note"])
	assert.Equal(t, admin.Name, got["decidedBy"])

	// A high-risk request's email has only the page, which asks for sign-in.
	var high map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":"Delete old backups",
		"risk":"high","approvers":[%q]}`, admin.Email), &high))
	mail = devMail(t, apiURL, admin.Email, "Approval needed: Delete old backups")
	require.Equal(t, []string{apiURL + "/approvals/" + high["id"].(string)}, mail.Links)
	fresh := browsertest.New(t)
	fresh.Navigate(mail.Links[0])
	assert.Contains(t, fresh.Location(), "/signin?next=")
	assert.Contains(t, fresh.Text("main"), "Sign in")
}

// TestBrowserAdminAddsAWebhook: an administrator adds a webhook endpoint
// from the admin pages, copies its secret from the one page that shows
// it, and sends a test that the receiver verifies with that secret.
func TestBrowserAdminAddsAWebhook(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	type post struct {
		signature string
		body      []byte
	}
	received := make(chan post, 4)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- post{r.Header.Get("Assent-Signature"), body}
	}))
	defer rcv.Close()
	shots := screenshotDir(t)

	b := browsertest.New(t)
	signInFromDevMail(t, b, apiURL, admin.Email)
	b.ClickAndWait(`a[href="/admin"]`)
	for _, section := range []string{"members", "teams", "guests", "keys", "rules", "actions"} {
		b.Navigate(apiURL + "/admin/" + section)
		b.CheckAccessibility("/admin/" + section)
	}
	b.Navigate(apiURL + "/admin")
	b.CheckAccessibility("the admin overview")
	b.ClickAndWait(`nav.admin-nav a[href="/admin/webhooks"]`)
	b.CheckAccessibility("the webhooks page")
	b.Run(chromedp.SendKeys(chromedp.CSS("#url"), rcv.URL+"/assent"),
		chromedp.Click(chromedp.CSS(`input[value="approval.approved"]`)),
		chromedp.Click(chromedp.CSS(`input[value="approval.rejected"]`)))
	b.ClickAndWait(`form[action="/admin/webhooks"] button[type=submit]`)
	secret, err := chromedp.Run(b.Context(), chromedp.Value(chromedp.CSS("#secret")))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(secret, "whsec_"), secret)
	assert.Contains(t, b.Text(".secret"), "only one that shows it")

	b.ClickAndWait(`form[action$="/test"] button`)
	assert.Contains(t, b.Text("#test-result"), "The test was delivered: HTTP 200")
	b.CheckAccessibility("a webhook endpoint's page")
	b.Screenshot(filepath.Join(shots, "admin-webhook.png"))
	select {
	case p := <-received:
		require.NoError(t, webhook.Verify(p.signature, p.body, secret, time.Now(), webhook.DefaultTolerance))
		assert.Contains(t, string(p.body), `"test":true`)
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver got nothing")
	}

	var hooks struct {
		Data []struct {
			URL    string
			Events []string
		}
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey, &hooks))
	require.Len(t, hooks.Data, 1)
	assert.Equal(t, rcv.URL+"/assent", hooks.Data[0].URL)
	assert.Equal(t, []string{"approval.approved", "approval.rejected"}, hooks.Data[0].Events)
	b.Navigate(apiURL + "/admin/webhooks")
	assert.NotContains(t, b.Text("main"), secret, "the secret is not shown again")
}
