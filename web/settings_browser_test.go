package web_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestBrowserSettingsMintsAToken: in a real browser, a member ticks two
// scopes on the Settings page and mints a token; the answer shows it once,
// ready to copy, and the page after shows it no more but lists it by its
// start. Ticking Confirm and Revoke beside it revokes it. Each page passes
// the accessibility check, the mint form's checkboxes and the revoke
// forms' controls labelled.
func TestBrowserSettingsMintsAToken(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s, _ := memberTokenSite(t, db)
	shots := shotsDir(t)

	b := browsertest.New(t)
	b.Run(chromedp.EmulateViewport(1280, 900))
	browserSignIn(t, s, b, "cy@example.com")
	b.Navigate(s.url + "/settings")
	b.CheckAccessibility("the Settings page")
	unlabelled := eval[[]string](t, b, `[...document.querySelectorAll("form[action='/settings/tokens'] input[type=checkbox]")].
		filter(c => !c.labels.length).map(c => c.value)`)
	assert.Empty(t, unlabelled, "every scope's checkbox has its label")
	b.Run(chromedp.Click(chromedp.CSS(`input[name=scopes][value="approvals:read"]`)),
		chromedp.Click(chromedp.CSS(`input[name=scopes][value="approvals:write"]`)))
	b.ClickAndWait(`form[action="/settings/tokens"] button`)

	assert.Contains(t, b.Text("main .secret"), "Copy it now: it will not be shown again.")
	secret := eval[string](t, b, `document.querySelector("#minted-secret").value`)
	require.True(t, strings.HasPrefix(secret, "asnt_member_"), "the token shows: %q", secret)
	k, err := accounts.New(s.store).Authenticate(context.Background(), secret)
	require.NoError(t, err, "it is a working token")
	assert.Equal(t, models.StringList{"approvals:read", "approvals:write"}, k.Key.Scopes)
	b.CheckAccessibility("the Settings page showing a minted token")
	b.Screenshot(filepath.Join(shots, "settings-token.png"))

	b.Navigate(s.url + "/settings")
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll("#minted-secret").length`), "shown once only")
	assert.NotContains(t, eval[string](t, b, `document.documentElement.outerHTML`), secret)

	// The page lists it by its start, with a Revoke form whose Confirm box
	// and button are labelled; ticked and sent, the token stops working.
	row := `//table[caption="Your API tokens"]//tr[th/code="` + k.Key.Prefix + `…"]`
	assert.Contains(t, b.Text("main table"), k.Key.Prefix+"…")
	form := `form[action="/settings/tokens/` + k.Key.ID + `/revoke"]`
	unnamed := eval[[]string](t, b, `[...document.querySelectorAll('form[action^="/settings/tokens/key_"] :is(input[type=checkbox], button)')].
		filter(c => !(c.labels && c.labels.length) && !c.textContent.trim()).map(c => c.outerHTML)`)
	assert.Empty(t, unnamed, "every Confirm box and Revoke button is labelled")
	assert.Contains(t, eval[string](t, b, `document.querySelector('`+form+` label.confirm').textContent`), "revoking the token starting "+k.Key.Prefix)
	b.Run(chromedp.Click(chromedp.CSS(form + ` input[name=confirm]`)))
	b.ClickAndWait(form + ` button`)
	assert.Contains(t, b.Text("main .notice"), "The token was revoked")
	assert.Contains(t, eval[string](t, b, `document.evaluate('`+row+`', document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue.textContent`), "Revoked")
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll('`+form+`').length`), "a revoked token has no form")
	_, err = accounts.New(s.store).Authenticate(context.Background(), secret)
	assert.Error(t, err, "the revoked token no longer authenticates")
	b.CheckAccessibility("the Settings page listing a revoked token")
	b.Screenshot(filepath.Join(shots, "settings-tokens.png"))
}
