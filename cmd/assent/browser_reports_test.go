package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
)

// TestBrowserAdminReleasesAHeldVersion: on assent dev, a version the scan
// held is listed on the admin page with what the scan found, the page
// passes the accessibility check, and Release makes it live.
func TestBrowserAdminReleasesAHeldVersion(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()
	var created struct {
		ID      string
		Version struct{ ID, Status string }
	}
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", boot.AgentKey,
		`{"title":"Partner <b>login</b>","content":"<form action=\"https://collect.example.net/login\"><input type=\"password\" name=\"p\"></form>"}`, &created))
	require.Equal(t, "held", created.Version.Status)

	b := browsertest.New(t)
	signInFromDevMail(t, b, apiURL, admin.Email)
	b.Navigate(apiURL + "/admin")
	b.ClickAndWait(`nav.admin-nav a[href="/admin/held-versions"]`)
	b.CheckAccessibility("the held versions page")
	assert.Contains(t, b.Text("main"), "Partner <b>login</b>, version 1")
	assert.Contains(t, b.Text("main"), "password-form-off-origin")
	b.Screenshot(filepath.Join(screenshotDir(t), "admin-held-version.png"))

	b.ClickAndWait(`form[action$="/release"] button`)
	assert.Contains(t, b.Text("main"), "The version was released")
	assert.Contains(t, b.Text("main"), "No version is held.")
	var got struct{ LiveVersion *int }
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/reports/"+created.ID, boot.AgentKey, &got))
	require.NotNil(t, got.LiveVersion)
	assert.Equal(t, 1, *got.LiveVersion)
}
