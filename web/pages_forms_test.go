package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestAdminOverviewLinksEverySection: every admin page a GET reaches
// without an id in its path is a section, and the overview links each
// one; a new admin page without its line there fails here.
func TestAdminOverviewLinksEverySection(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		r := b.get("/admin")
		require.Equal(t, http.StatusOK, r.status, r.body)
		list := regexp.MustCompile(`(?s)<ul class="sections">(.*?)</ul>`).FindStringSubmatch(r.body)
		require.NotNil(t, list, "the overview lists the sections")
		sections := 0
		for _, route := range s.engine.Routes() {
			if route.Method != http.MethodGet || !strings.HasPrefix(route.Path, "/admin/") || strings.ContainsAny(route.Path, ":*") {
				continue
			}
			sections++
			assert.Contains(t, list[1], `<a href="`+route.Path+`">`, "the overview links %s", route.Path)
			assert.Contains(t, r.body, `<li><a href="`+route.Path+`"`, "the section navigation links %s", route.Path)
		}
		assert.GreaterOrEqual(t, sections, 9, "the routes were read")
	})
}

// TestKeysListSummarisesScopes: a key with many scopes is listed as a
// few words per resource with the full list folded under them, not one
// line per scope; a key with few scopes reads in full.
func TestKeysListSummarisesScopes(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		_, _, err := s.store.CreateKey(ctx, s.org.ID, "everything", models.KeyAgent, scopes.All)
		require.NoError(t, err)
		_, _, err = s.store.CreateKey(ctx, s.org.ID, "billing", models.KeyAgent,
			[]string{scopes.ReportsRead, scopes.ApprovalsWrite, scopes.ApprovalsRead})
		require.NoError(t, err)
		_, _, err = s.store.CreateKey(ctx, s.org.ID, "wide", models.KeyAgent,
			[]string{scopes.ApprovalsRead, scopes.ApprovalsWrite, scopes.ReportsRead, scopes.ReportsWrite, scopes.FlowsRead, scopes.GateCheck})
		require.NoError(t, err)

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		r := b.get("/admin/keys")
		require.Equal(t, http.StatusOK, r.status, r.body)
		row := func(name string) string {
			m := regexp.MustCompile(`(?s)<th scope="row">` + name + `</th>(.*?)</tr>`).FindStringSubmatch(r.body)
			require.NotNil(t, m, "row %s", name)
			return m[1]
		}
		assert.Contains(t, row("billing"), "<td>approvals read/write, reports read</td>", "few resources read in full")
		wide := row("wide")
		assert.Contains(t, wide, "<summary>approvals read/write, flows read &#43;3 more<span")
		assert.Contains(t, wide, "<li><code>gate:check</code></li>", "the full list is folded under the summary")
		every := row("everything")
		assert.Contains(t, every, "<summary>all 16 scopes<span")
		assert.Equal(t, len(scopes.All), strings.Count(every, "<li><code>"), "every scope once, in the folded list")
	})
}

// TestEveryPageHasAnIcon: every page links an icon the app serves, kept
// for long, that its Content-Security-Policy lets load; /favicon.ico,
// which browsers ask for on their own, answers an icon too, not a 404.
func TestEveryPageHasAnIcon(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		signin := b.get("/signin")
		require.Equal(t, http.StatusOK, signin.status)
		m := regexp.MustCompile(`<link rel="icon" href="(/assets/icon-[0-9a-f]+\.svg)" type="image/svg\+xml">`).FindStringSubmatch(signin.body)
		require.NotNil(t, m, signin.body)
		assert.Contains(t, signin.header.Get("Content-Security-Policy"), "img-src 'self'", "the page may load its icon")
		b.signIn(s, "ada@example.com")
		assert.Contains(t, b.get("/inbox").body, `<link rel="icon" href="`+m[1]+`"`)

		svg := b.get(m[1])
		require.Equal(t, http.StatusOK, svg.status)
		assert.Equal(t, "image/svg+xml", svg.header.Get("Content-Type"))
		assert.Equal(t, "public, max-age=31536000, immutable", svg.header.Get("Cache-Control"))
		assert.True(t, strings.HasPrefix(svg.body, "<svg"), svg.body)
		assert.NotContains(t, svg.body, "<script")

		ico := s.browser(t).get("/favicon.ico")
		require.Equal(t, http.StatusOK, ico.status)
		assert.Equal(t, "image/x-icon", ico.header.Get("Content-Type"))
		assert.Contains(t, ico.header.Get("Cache-Control"), "max-age=")
		require.Greater(t, len(ico.body), 22)
		assert.Equal(t, "\x00\x00\x01\x00\x01\x00", ico.body[:6], "an ICO of one image")
		assert.Equal(t, "\x89PNG", ico.body[22:26], "holding a PNG")
	})
}

// TestRefusedFormsKeepWhatWasTyped: an admin row's refused edit, a
// refused comment and a refused share come back with what was typed and
// a message naming the field by its label.
func TestRefusedFormsKeepWhatWasTyped(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		team, err := testenv.CreateTeam(s.store, ctx, s.org.ID, "Finance", models.TeamKindTeam, nil)
		require.NoError(t, err)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		r := b.post("/admin/teams/"+team.ID, url.Values{"csrf": {csrf}, "name": {"Finance"}, "members": {"nobody@example.com"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Contains(t, r.body, `<details open>`, "the refused row's form is open")
		assert.Contains(t, r.body, `name="members" rows="3" aria-invalid="true" aria-describedby="problem">nobody@example.com</textarea>`,
			"the row keeps what was typed, marked")
		assert.NotContains(t, r.body, `id="members" name="members" rows="4" aria-invalid`, "the add form is not marked")
		assert.True(t, strings.HasSuffix(problemOf(t, r), "."), problemOf(t, r))
	})
}
