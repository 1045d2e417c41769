package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
)

// TestBrowserDevSignInHelp signs in on `assent dev` the way a newcomer
// finds it: a demo person picked from the sign-in page fills the form,
// and "check your email" leads to the dev mailbox holding the link.
func TestBrowserDevSignInHelp(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	apiURL, _, admin, stop := startDemo(t)
	defer stop()
	shots := screenshotDir(t)

	b := browsertest.New(t)
	b.Navigate(apiURL + "/signin")
	assert.Contains(t, b.Text("main"), "Demo people")
	b.CheckAccessibility("the dev sign-in page")
	b.Screenshot(filepath.Join(shots, "signin-dev.png"))

	b.ClickAndWait(`a[href^="/signin?email=admin%40example.com"]`)
	b.ClickAndWait(`form[action="/signin"] button`)
	assert.Contains(t, b.Text("main"), "Check your email")
	assert.Contains(t, b.Text("main"), admin.Email, "the demo link filled in the address")
	b.CheckAccessibility("check your email, in dev")
	b.Screenshot(filepath.Join(shots, "signin-sent-dev.png"))

	b.ClickAndWait(`a[href="/dev/mail"]`)
	require.True(t, strings.HasSuffix(b.Location(), "/dev/mail"), b.Location())
	assert.Contains(t, b.Text("body"), admin.Email, "the link is in the dev mailbox")
}
