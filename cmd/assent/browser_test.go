package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/bootstrap"
	"github.com/assent-hq/assent/internal/browsertest"
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

// TestBrowserDecidesAnApproval is issue 5's "done when" in a real browser:
// on `assent dev`, an agent creates an approval with curl's request, a
// person signs in from the dev mailbox, opens it from the inbox, approves
// it with a correction, and the agent's GET shows the outcome.
func TestBrowserDecidesAnApproval(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), ".assent")
	apiURL, _, _, stop := startDev(t, dataDir)
	defer stop()
	boot, err := bootstrap.Load(dataDir)
	require.NoError(t, err)
	admin := demoMember(t, boot, "admin")
	var created map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":"Refund <script>alert(1)</script> order 42",
		"description":"The customer was charged twice.","risk":"medium","approvers":[%q],
		"input":{"amount":120,"currency":"EUR"},"editableFields":["amount"],
		"factors":[{"label":"Duplicate charge found","status":"ok"}]}`, admin.Email), &created))
	id := created["id"].(string)
	assert.Equal(t, apiURL+"/approvals/"+id, created["url"], "the approval's url is its page")
	shots := screenshotDir(t)

	b := browsertest.New(t)
	b.Navigate(apiURL + "/")
	assert.Contains(t, b.Location(), "/signin")
	b.Run(chromedp.SendKeys(chromedp.CSS("#email"), admin.Email))
	b.ClickAndWait(`form[action="/signin"] button`)
	assert.Contains(t, b.Text("main"), "Check your email")

	var link string
	require.Eventually(t, func() bool {
		var mail []struct{ To, Links []string }
		getJSON(t, apiURL+"/dev/mail.json", "", &mail)
		for _, m := range mail {
			if len(m.To) == 1 && m.To[0] == admin.Email && len(m.Links) > 0 {
				link = m.Links[0]
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond, "the sign-in email reaches the dev mailbox")
	b.Navigate(link)
	b.ClickAndWait(`form[action="/signin/link"] button`)
	require.True(t, strings.HasSuffix(b.Location(), "/inbox"), b.Location())
	assert.Contains(t, b.Text("main"), "Refund <script>alert(1)</script> order 42", "the title is text, not markup")
	b.Screenshot(filepath.Join(shots, "inbox.png"))

	b.ClickAndWait(`a[href="/approvals/` + id + `"]`)
	assert.Contains(t, b.Text("h1"), "<script>")
	scripts, err := chromedp.Run(b.Context(), chromedp.Evaluate[int](`document.querySelectorAll("script").length`))
	require.NoError(t, err)
	assert.Zero(t, scripts, "no script element on the page")
	b.Screenshot(filepath.Join(shots, "approval.png"))

	b.Run(chromedp.SetValue(chromedp.CSS("#field-amount"), "100"), chromedp.SendKeys(chromedp.CSS("#note"), "Refund the duplicate only."))
	b.ClickAndWait(`button[value="approve"]`)
	assert.Contains(t, b.Text(".settled"), "By "+admin.Name)
	b.Screenshot(filepath.Join(shots, "decided.png"))

	var got map[string]any
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+id, boot.AgentKey, &got))
	assert.Equal(t, "approved", got["status"])
	assert.Equal(t, map[string]any{"amount": 100.0, "currency": "EUR"}, got["approvedInput"])
	assert.Equal(t, []any{map[string]any{"field": "amount", "from": 120.0, "to": 100.0}}, got["changes"])
}
