package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/worker"
)

// TestAdminReleasesAndDeclinesHeldVersions: the held-versions page lists
// each held version with what the scan found, escaped; its buttons
// release and decline through the hold workflow, as the API does; a plain
// member is refused the page.
func TestAdminReleasesAndDeclinesHeldVersions(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		tc := temporalenv.Client(t)
		blobs, err := blobstore.Open(ctx, "", t.TempDir())
		require.NoError(t, err)
		scanner, err := publishscan.New()
		require.NoError(t, err)
		s := adminSiteWith(t, db, app.Deps{Temporal: tc, Blobs: blobs, Scanner: scanner})
		store, rep := s.store, s.services.Reports
		temporalenv.Run(t, tc, worker.Deps{Store: store, BaseURL: s.url})

		_, agentKey, err := store.CreateKey(ctx, s.org.ID, "agent", models.KeyAgent, []string{"reports:write"})
		require.NoError(t, err)
		agent, err := accounts.New(store).Authenticate(ctx, agentKey)
		require.NoError(t, err)
		publish := func(title, page string) *models.ReportVersion {
			_, v, err := rep.Create(ctx, agent, &reports.CreateInput{Title: title, Source: reports.Source{Content: &page}}, nil)
			require.NoError(t, err)
			require.Equal(t, models.VersionHeld, v.State)
			return v
		}
		first := publish("Phish <b>", `<form action="https://collect.example.net/"><input type=password></form>`)
		second := publish("Moved", `<meta http-equiv="refresh" content="0; url=https://elsewhere.example/">`)

		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		list := b.get("/admin/held-versions")
		require.Equal(t, http.StatusOK, list.status, list.body)
		assert.Contains(t, list.body, "Phish &lt;b&gt;, version 1")
		assert.Contains(t, list.body, "password-form-off-origin")
		assert.Contains(t, list.body, "&lt;form action=&#34;https://collect.example.net/&#34;&gt;")
		assert.Contains(t, list.body, "meta-refresh-off-origin")

		r := b.post("/admin/held-versions/"+first.ID+"/release", url.Values{"csrf": {csrf}, "submission": {"sub1"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		released, err := store.GetReport(ctx, s.org.ID, first.ReportID)
		require.NoError(t, err)
		require.NotNil(t, released.LiveVersion)
		assert.Equal(t, 1, *released.LiveVersion)
		again := b.post("/admin/held-versions/"+first.ID+"/decline", url.Values{"csrf": {csrf}, "submission": {"sub1"}})
		assert.Equal(t, http.StatusConflict, again.status)

		r = b.post("/admin/held-versions/"+second.ID+"/decline", url.Values{"csrf": {csrf}, "submission": {"sub1"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		v, err := store.GetVersion(ctx, s.org.ID, second.ID)
		require.NoError(t, err)
		assert.Equal(t, models.VersionDeclined, v.State)
		assert.Contains(t, b.get("/admin/held-versions").body, "No version is held.")

		s.member(t, "cy@example.com", models.RoleMember)
		plain := s.browser(t)
		plain.signIn(s, "cy@example.com")
		assert.Equal(t, http.StatusForbidden, plain.get("/admin/held-versions").status)
	})
}
