package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/webhooks"
)

// shotsDir is where these tests save screenshots: the repository's
// docs/screenshots when ASSENT_UPDATE_SCREENSHOTS=1, else a temporary
// folder.
func shotsDir(t *testing.T) string {
	if os.Getenv("ASSENT_UPDATE_SCREENSHOTS") == "1" {
		return filepath.Join("..", "docs", "screenshots")
	}
	return t.TempDir()
}

// eval runs a script in the page and returns its value.
func eval[T any](t *testing.T, b *browsertest.Browser, script string) T {
	t.Helper()
	v, err := chromedp.Run(b.Context(), chromedp.Evaluate[T](script))
	require.NoError(t, err, script)
	return v
}

// browserSignIn signs email in through the sign-in link pages.
func browserSignIn(t *testing.T, s *site, b *browsertest.Browser, email string) {
	t.Helper()
	b.Navigate(s.url + "/signin/link?token=" + s.link(t, email))
	b.ClickAndWait(`form[action="/signin/link"] button`)
}

// TestBrowserAdminPagesLookAlike: in a real browser, every admin tab has
// the same content width, scopes and event names never break inside,
// every checkbox has one size, destructive buttons are red, and the
// delivery log shows a resend apart from the first send.
func TestBrowserAdminPagesLookAlike(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s := adminSite(t, db)
	ctx := context.Background()
	_, _, err := s.store.CreateKey(ctx, s.org.ID, "billing agent", models.KeyAgent, scopes.All)
	require.NoError(t, err)
	require.NoError(t, s.store.CreateRule(ctx, &models.Rule{OrganizationID: s.org.ID, Name: "Hide bank details",
		Kind: "restricted", Fields: models.StringList{"iban"}, Enabled: true}))
	_, err = testenv.CreateTeam(s.store, ctx, s.org.ID, "Finance", models.TeamKindTeam, []string{s.ada.ID})
	require.NoError(t, err)
	ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/hook",
		Format: models.FormatJSON, Events: events.WebhookKinds(), Enabled: true, Secret: "whsec_json"})
	require.NoError(t, err)
	d := s.failedDelivery(t, s.org.ID, ep)
	_, err = webhooks.New(s.store.DeliveryStore, nil, "").Resend(ctx, s.org.ID, d.ID)
	require.NoError(t, err)
	dl, err := s.store.GetDelivery(ctx, s.org.ID, d.ID)
	require.NoError(t, err)
	require.NoError(t, webhooks.Attempts{Store: s.store.DeliveryStore}.Record(ctx, &dl.Delivery, models.AttemptResult{Attempt: 3, At: models.Now().Add(time.Minute),
		StatusCode: 200, Latency: 40 * time.Millisecond}))
	shots := shotsDir(t)

	b := browsertest.New(t)
	browserSignIn(t, s, b, "ada@example.com")
	tabs := []string{"/admin", "/admin/members", "/admin/teams", "/admin/guests", "/admin/keys", "/admin/webhooks", "/admin/webhooks/" + ep.ID, "/admin/rules",
		"/admin/actions", "/admin/slack", "/admin/model-screen", "/admin/held-versions", "/admin/system"}

	b.Run(chromedp.EmulateViewport(1400, 900))
	widths := map[string]float64{}
	for _, tab := range tabs {
		b.Navigate(s.url + tab)
		widths[tab] = eval[float64](t, b, `document.querySelector("main").getBoundingClientRect().width`)
	}
	for _, tab := range tabs {
		assert.Equal(t, widths["/admin"], widths[tab], "%s has the overview's width", tab)
	}

	// Narrow, where long names would wrap: none breaks inside, and the
	// checkboxes beside them keep their size.
	b.Run(chromedp.EmulateViewport(760, 900))
	for _, tab := range tabs {
		b.Navigate(s.url + tab)
		broken := eval[[]string](t, b, `[...document.querySelectorAll("main code:not(.wrap)")].
			filter(c => c.getClientRects().length > 1).map(c => c.textContent)`)
		assert.Empty(t, broken, "%s: names broken across lines", tab)
		sizes := eval[[]string](t, b, `[...new Set([...document.querySelectorAll("main input[type=checkbox]")].
			map(c => { const r = c.getBoundingClientRect(); return r.width + "x" + r.height }))]`)
		assert.LessOrEqual(t, len(sizes), 1, "%s: checkboxes of one size, got %v", tab, sizes)
		if len(sizes) == 1 {
			assert.Equal(t, "17.59375x17.59375", sizes[0], "%s: the one checkbox size (1.1rem)", tab)
		}
		danger := eval[[]string](t, b, `[...document.querySelectorAll("main button")].
			filter(x => /^(Revoke|Delete|Remove)/.test(x.textContent.trim())).map(x => getComputedStyle(x).color)`)
		for _, c := range danger {
			assert.Equal(t, "rgb(164, 22, 26)", c, "%s: a destructive button is red", tab)
		}
		b.CheckAccessibility(tab)
	}

	b.Run(chromedp.EmulateViewport(1280, 900))
	b.Navigate(s.url + "/admin/keys")
	b.Screenshot(filepath.Join(shots, "admin-keys.png"))
	b.Navigate(s.url + "/admin/webhooks/" + ep.ID + "#log-h")
	assert.Contains(t, b.Text("section[aria-labelledby=log-h] tbody"), "First send: Failed")
	assert.Contains(t, b.Text("section[aria-labelledby=log-h] tbody"), "Sent again: Delivered")
	b.Screenshot(filepath.Join(shots, "admin-delivery-log.png"))
}

// TestBrowserApprovalPageLayout: on the page an emailed link opens, the
// banner stands apart from the title, and what the agent attached shows
// above the decision buttons; a missing request's page leads back to the
// inbox.
func TestBrowserApprovalPageLayout(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s := newSite(t, db)
	ctx := context.Background()
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Pay supplier 7",
		ExpiresAt: time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second),
		Requester: "key_test", RequestedBy: "billing agent",
		Metadata: models.RawJSON(`{"ticket":"T-9","invoice":"INV-7"}`)}, Description: "Invoice 7 from Initech, due Friday.",
		Risk: models.RiskLow, ApproverIDs: []string{s.ada.ID},
		RequiredApprovals: 1,
		Input:             models.RawJSON(`{"amount":120,"currency":"EUR"}`),
	}
	_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), a, nil)
	require.NoError(t, err)
	token, err := s.store.CreateDecisionLink(ctx, a.OrganizationID, a.ID, a.ExpiresAt, s.ada.ID)
	require.NoError(t, err)
	shots := shotsDir(t)

	b := browsertest.New(t)
	b.Navigate(s.url + paths.DecisionLink(a.ID, token))
	assert.Contains(t, b.Text("main"), "deciding as Ada Lovelace")
	gap := eval[float64](t, b, `document.querySelector("h1").getBoundingClientRect().top -
		document.querySelector("section.notice").getBoundingClientRect().bottom`)
	assert.GreaterOrEqual(t, gap, 16.0, "the banner has room below it")
	above := eval[bool](t, b, `document.querySelector("#meta-h").getBoundingClientRect().top <
		document.querySelector("button[value=approve]").getBoundingClientRect().top`)
	assert.True(t, above, "the agent's details show above the decision buttons")
	b.CheckAccessibility("the emailed link's page")
	b.Screenshot(filepath.Join(shots, "approval-link.png"))

	browserSignIn(t, s, b, "ada@example.com")
	b.Navigate(s.url + "/approvals/apr_missing")
	assert.Equal(t, "Approval apr_missing not found.", b.Text("main p"))
	b.CheckAccessibility("the not-found page")
	b.Screenshot(filepath.Join(shots, "not-found.png"))
	b.ClickAndWait(`main a[href="/inbox"]`)
	assert.Contains(t, b.Location(), "/inbox")
}
