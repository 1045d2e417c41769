package web_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestBrowserSettingsMintsAToken: in a real browser, a member ticks two
// scopes on the Settings page and mints a token; the answer shows it once,
// ready to copy, and the page after shows it no more. Each page passes the
// accessibility check, the mint form's checkboxes labelled.
func TestBrowserSettingsMintsAToken(t *testing.T) {
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
	k, err := s.store.Authenticate(context.Background(), secret)
	require.NoError(t, err, "it is a working token")
	assert.Equal(t, models.StringList{"approvals:read", "approvals:write"}, k.Key.Scopes)
	b.CheckAccessibility("the Settings page showing a minted token")
	b.Screenshot(filepath.Join(shots, "settings-token.png"))

	b.Navigate(s.url + "/settings")
	assert.Equal(t, 0, eval[int](t, b, `document.querySelectorAll("#minted-secret").length`), "shown once only")
	assert.NotContains(t, eval[string](t, b, `document.documentElement.outerHTML`), secret)
}
