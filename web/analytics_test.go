package web_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// readership is the readership section of a report's page, "" when the
// page has none.
func readership(body string) string {
	start := strings.Index(body, `aria-labelledby="readership"`)
	if start < 0 {
		return ""
	}
	end := strings.Index(body[start:], "</section>")
	return body[start : start+end]
}

// TestReportPageShowsReadership: the owner of a report sees its views on
// every plan; on the team plan its readers, a 30-day chart drawn as SVG
// and its recent readers, named once the page's checkbox turns
// showViewers on; a reader sees none of it and may not change it.
func TestReportPageShowsReadership(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob Stone", "")
		require.NoError(t, err)
		_, _, err = s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus Grey")
		require.NoError(t, err)
		r := s.publish(t, "q3", []string{"bob@example.com", "gus@partner.example"},
			[]bundle.InlineFile{{Path: "index.html", Content: "<h1>Q3</h1>"}})

		// Three readers open it on its own origin: a member and a guest,
		// signed in there, then, once it is public, someone not signed in.
		bob := s.reader(t, "bob@example.com")
		for _, b := range []*browser{bob, s.reader(t, "gus@partner.example")} {
			got, _ := b.follow(s.origin(r) + "/")
			require.Equal(t, http.StatusOK, got.status, got.body)
		}
		_, err = s.reports.Share(ctx, s.org.ID, models.Actor{ID: s.ada.ID, Name: "Ada", IsPerson: true}, r.ID, &reports.AudienceInput{Audience: []string{"public"}})
		require.NoError(t, err)
		anon := s.reader(t, "").get(s.origin(r) + "/")
		require.Equal(t, http.StatusOK, anon.status)

		ada := s.reader(t, "ada@example.com")
		free := readership(ada.get("/reports/q3").body)
		require.NotEmpty(t, free, "the owner sees the report's readership")
		assert.Contains(t, free, "<dt>Views</dt><dd>3</dd>")
		assert.Contains(t, free, "come with the team plan")
		assert.NotContains(t, free, "<svg", "no chart on the free plan")

		_, err = s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{Plan: new(models.PlanTeam)})
		require.NoError(t, err)
		page := ada.get("/reports/q3")
		require.Equal(t, http.StatusOK, page.status)
		team := readership(page.body)
		assert.Contains(t, team, "<dt>Readers</dt><dd>2 (1 member, 1 guest)</dd>")
		assert.Contains(t, team, "<dt>Anonymous views</dt><dd>1 ")
		assert.Contains(t, team, `<svg class="views-chart"`)
		assert.Contains(t, team, `role="img" aria-labelledby="views-chart-title views-chart-desc"`)
		assert.Contains(t, team, `<title id="views-chart-title">Views per day, last 30 days (UTC)</title>`)
		assert.Contains(t, team, "3 views in the last 30 days, 3 of them today", "the chart is summed up in words")
		assert.Equal(t, 1, strings.Count(team, `<rect class="bar"`), "one bar: today's")
		assert.NotContains(t, team, "<script")
		assert.Contains(t, team, "A member")
		assert.Contains(t, team, "A guest")
		assert.NotContains(t, team, "Bob Stone", "readers are not named while showViewers is off")
		assert.NotContains(t, team, "Gus Grey")
		assert.NotContains(t, team, " checked")

		shown := ada.post("/reports/q3", url.Values{"csrf": {page.csrf(t)}, "action": {"viewers"}, "showViewers": {"true"}})
		require.Equal(t, http.StatusOK, shown.status, shown.body)
		assert.Contains(t, shown.body, "Readership analytics name this report&#39;s readers.")
		named := readership(shown.body)
		assert.Contains(t, named, "Bob Stone")
		assert.Contains(t, named, "gus@partner.example")
		assert.Contains(t, named, " checked")
		stored, err := s.store.GetReport(ctx, s.org.ID, r.ID)
		require.NoError(t, err)
		assert.True(t, stored.ShowViewers, "the checkbox goes through the same settings as the API")

		hidden := ada.post("/reports/q3", url.Values{"csrf": {page.csrf(t)}, "action": {"viewers"}})
		require.Equal(t, http.StatusOK, hidden.status)
		assert.NotContains(t, readership(hidden.body), "Bob Stone", "an unticked box turns it off")

		reading := bob.get("/reports/q3")
		require.Equal(t, http.StatusOK, reading.status)
		assert.Empty(t, readership(reading.body), "a reader does not see the report's readership")
		refused := bob.post("/reports/q3", url.Values{"csrf": {reading.csrf(t)}, "action": {"viewers"}, "showViewers": {"true"}})
		assert.Equal(t, http.StatusForbidden, refused.status)
	})
}

// TestBrowserReadershipPanel: in a real browser, the readership of a
// report on the team plan passes the accessibility check, and its chart
// is drawn at the section's width with a bar for each day with views.
func TestBrowserReadershipPanel(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s := newReadingSite(t, db)
	ctx := context.Background()
	_, err := s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{Plan: new(models.PlanTeam)})
	require.NoError(t, err)
	bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob Stone", "")
	require.NoError(t, err)
	r := s.publish(t, "q3", []string{"bob@example.com"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Q3</h1>"}})
	now := time.Now().UTC()
	for i, daysAgo := range []int{0, 0, 0, 2, 2, 9, 17, 17, 17, 17, 28} {
		viewer := bob.ID
		if i%3 == 0 {
			viewer = ""
		}
		require.NoError(t, db.Create(&models.ReportView{ID: ids.New(ids.View), OrganizationID: s.org.ID, ReportID: r.ID,
			ViewerID: viewer, Version: 1, At: now.AddDate(0, 0, -daysAgo)}).Error)
	}

	b := browsertest.New(t)
	browserSignIn(t, s.site, b, "ada@example.com")
	b.Navigate(s.url + "/reports/q3")
	assert.Contains(t, b.Text("#readership"), "Readership")
	b.CheckAccessibility("a report's page with its readership")
	width := eval[float64](t, b, `document.querySelector("svg.views-chart").getBoundingClientRect().width`)
	assert.Greater(t, width, 300.0, "the chart takes the section's width")
	assert.Equal(t, 5, eval[int](t, b, `document.querySelectorAll("svg.views-chart rect.bar").length`), "a bar per day with views")
	b.Run(chromedp.ScrollIntoView("#readership"))
	b.Screenshot(filepath.Join(shotsDir(t), "report-readership.png"))
}
