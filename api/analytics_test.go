package api_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// onPlan puts the fixture's organisation on plan, as the operator would.
func (f *fixture) onPlan(t *testing.T, plan string) {
	t.Helper()
	_, err := f.store.UpdateOrganization(context.Background(), f.org.ID, models.OrganizationChange{Plan: &plan})
	require.NoError(t, err)
}

// view records that viewer (nil: a public reader not signed in) opened r,
// as its host does for each page it serves.
func (f *fixture) view(t *testing.T, r *models.Report, viewer *models.Person) {
	t.Helper()
	require.NoError(t, f.services.Reports.RecordView(context.Background(), r, 1, viewer))
}

func (f *fixture) report(t *testing.T, slug string) *models.Report {
	t.Helper()
	r, err := f.store.GetReport(context.Background(), f.org.ID, slug)
	require.NoError(t, err)
	return r
}

// TestReportAnalytics: total views on every plan; on the team plan the
// readers (a member and a guest once each, anonymous views as views only),
// 30 days of series with zeros and today's views, and recent readers named
// only once showViewers is on; who may read them.
func TestReportAnalytics(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		dana, _, bob, _, gus := f.people(t)
		f.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html("q"))+`}`)
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/q3/share", f.memberToken, `{"audience":["public","bob@example.com","gus@partner.example"]}`, nil).status)
		r := f.report(t, "q3")
		bobReads := &models.Person{Organization: f.org, Member: bob}
		f.view(t, r, bobReads)
		f.view(t, r, bobReads)
		f.view(t, r, &models.Person{Organization: f.org, Guest: gus})
		f.view(t, r, nil)
		f.view(t, r, nil)
		threeDaysAgo := time.Now().UTC().AddDate(0, 0, -3)
		require.NoError(t, db.Create(&models.ReportView{ID: ids.New(ids.View), OrganizationID: f.org.ID, ReportID: r.ID,
			ViewerID: bob.ID, Version: 1, At: threeDaysAgo}).Error)
		today := time.Now().UTC().Format(time.DateOnly)

		free := f.do(t, "GET", "/api/v1/reports/q3/analytics", f.agentKey, "", nil)
		require.Equal(t, 200, free.status, string(free.body))
		assert.Equal(t, map[string]any{"reportId": r.ID, "plan": "free", "totalViews": 6.0}, free.decoded, "the free plan counts views, nothing more")

		f.onPlan(t, models.PlanTeam)
		team := f.do(t, "GET", "/api/v1/reports/q3/analytics", f.agentKey, "", nil)
		require.Equal(t, 200, team.status, string(team.body))
		got := team.decoded
		assert.Equal(t, "team", got["plan"])
		assert.EqualValues(t, 6, got["totalViews"])
		assert.EqualValues(t, 2, got["uniqueReaders"], "Bob and Gus")
		assert.EqualValues(t, 1, got["internalReaders"])
		assert.EqualValues(t, 1, got["externalReaders"])
		assert.EqualValues(t, 2, got["anonymousViews"], "anonymous views are views, not readers")
		series := got["series"].([]any)
		require.Len(t, series, 30)
		last := series[29].(map[string]any)
		assert.Equal(t, map[string]any{"date": today, "views": 5.0, "readers": 2.0}, last, "today is last")
		assert.Equal(t, map[string]any{"date": threeDaysAgo.Format(time.DateOnly), "views": 1.0, "readers": 1.0}, series[26])
		assert.Equal(t, time.Now().UTC().AddDate(0, 0, -29).Format(time.DateOnly), series[0].(map[string]any)["date"], "oldest first")
		zeros := 0
		for _, d := range series {
			if d.(map[string]any)["views"] == 0.0 {
				zeros++
			}
		}
		assert.Equal(t, 28, zeros, "days nobody opened it are there, as zeros")
		recent := got["recentReaders"].([]any)
		require.Len(t, recent, 2)
		first, second := recent[0].(map[string]any), recent[1].(map[string]any)
		assert.Equal(t, "guest", first["kind"], "most recent first")
		assert.Equal(t, "member", second["kind"])
		assert.EqualValues(t, 3, second["views"])
		for _, reader := range recent {
			for _, field := range []string{"id", "name", "email"} {
				assert.NotContains(t, reader, field, "showViewers is off")
			}
		}
		assert.NotContains(t, string(team.body), bob.ID)

		shown := f.do(t, "PATCH", "/api/v1/reports/q3", f.agentKey, `{"showViewers":true}`, nil)
		require.Equal(t, 200, shown.status, string(shown.body))
		assert.Equal(t, true, shown.decoded["showViewers"])
		assert.Equal(t, "internal", shown.decoded["classification"], "the classification stays")
		named := f.do(t, "GET", "/api/v1/reports/q3/analytics", f.agentKey, "", nil).decoded["recentReaders"].([]any)
		assert.Equal(t, map[string]any{"id": gus.ID, "name": "Gus Grey", "email": "gus@partner.example"}, pick(named[0], "id", "name", "email"))
		assert.Equal(t, map[string]any{"id": bob.ID, "name": "Bob Stone", "email": "bob@example.com"}, pick(named[1], "id", "name", "email"))

		// Who may read them: a member who reads the report, the owner of the
		// organisation; not another organisation, nor a member it is not
		// shared with.
		f.publish(t, `{"title":"Closed","slug":"team/closed","content":`+jsonString(html("c"))+`}`)
		danaToken := f.token(t, dana)
		cases := []struct {
			name, path, key string
			status          int
			code            string
		}{
			{"a reader", "/api/v1/reports/q3/analytics", danaToken, 200, ""},
			{"the organisation's owner, a slug's slashes bare", "/api/v1/reports/team/closed/analytics", f.memberToken, 200, ""},
			{"a member it is not shared with", "/api/v1/reports/team/closed/analytics", danaToken, 403, "forbidden"},
			{"another organisation", "/api/v1/reports/" + r.ID + "/analytics", f.otherAgent, 404, "not_found"},
			{"no such report", "/api/v1/reports/nope/analytics", f.agentKey, 404, "not_found"},
			{"no scope", "/api/v1/reports/q3/analytics", f.readOnlyKey, 403, "insufficient_scope"},
			{"an admin key", "/api/v1/reports/q3/analytics", f.adminKey, 403, "insufficient_scope"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := f.do(t, "GET", c.path, c.key, "", nil)
				require.Equal(t, c.status, res.status, string(res.body))
				assert.Equal(t, c.code, errField(res, "code"))
			})
		}
	})
}

// pick is the fields of a decoded object named.
func pick(v any, fields ...string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if x, ok := v.(map[string]any)[f]; ok {
			out[f] = x
		}
	}
	return out
}

// TestOrganizationAnalytics: every live report with its views, those
// nobody opened included and archived ones left out, paged; a plain member
// sees the reports they read; below the team plan, 402.
func TestOrganizationAnalytics(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		dana, _, _, _, gus := f.people(t)
		f.publish(t, `{"title":"Read","slug":"read","audience":["dana@example.com"],"content":`+jsonString(html("r"))+`}`)
		f.publish(t, `{"title":"Quiet","slug":"quiet","content":`+jsonString(html("q"))+`}`)
		f.publish(t, `{"title":"Gone","slug":"gone","content":`+jsonString(html("g"))+`}`)
		read, gone := f.report(t, "read"), f.report(t, "gone")
		f.view(t, read, &models.Person{Organization: f.org, Member: dana})
		f.view(t, read, &models.Person{Organization: f.org, Guest: gus})
		f.view(t, read, nil)
		f.view(t, gone, nil)
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/gone/archive", f.agentKey, "", nil).status)

		refused := f.do(t, "GET", "/api/v1/analytics", f.agentKey, "", nil)
		require.Equal(t, 402, refused.status, string(refused.body))
		assert.Equal(t, "plan_required", errField(refused, "code"))
		assert.Contains(t, errField(refused, "message"), "team plan")

		f.onPlan(t, models.PlanEnterprise)
		all := f.do(t, "GET", "/api/v1/analytics", f.agentKey, "", nil)
		require.Equal(t, 200, all.status, string(all.body))
		assert.Nil(t, all.decoded["nextCursor"])
		rows := all.decoded["data"].([]any)
		require.Len(t, rows, 2, "the archived report is left out: %s", all.body)
		quiet := rows[0].(map[string]any)
		assert.Equal(t, map[string]any{"reportId": f.report(t, "quiet").ID, "slug": "quiet", "title": "Quiet", "totalViews": 0.0,
			"uniqueReaders": 0.0, "lastViewedAt": nil}, quiet, "nobody opened it: zeros")
		opened := rows[1].(map[string]any)
		assert.Equal(t, read.ID, opened["reportId"])
		assert.EqualValues(t, 3, opened["totalViews"])
		assert.EqualValues(t, 2, opened["uniqueReaders"], "Dana and Gus; the anonymous view is no reader")
		assert.NotNil(t, opened["lastViewedAt"])

		page1 := f.do(t, "GET", "/api/v1/analytics?limit=1", f.agentKey, "", nil)
		require.Equal(t, 200, page1.status)
		require.Len(t, page1.decoded["data"], 1)
		cursor, _ := page1.decoded["nextCursor"].(string)
		require.NotEmpty(t, cursor)
		page2 := f.do(t, "GET", "/api/v1/analytics?limit=1&cursor="+url.QueryEscape(cursor), f.agentKey, "", nil)
		require.Equal(t, 200, page2.status)
		assert.Equal(t, read.ID, page2.decoded["data"].([]any)[0].(map[string]any)["reportId"])
		assert.Nil(t, page2.decoded["nextCursor"])

		danaSees := f.do(t, "GET", "/api/v1/analytics", f.token(t, dana), "", nil)
		require.Equal(t, 200, danaSees.status)
		require.Len(t, danaSees.decoded["data"], 1, "a plain member sees the reports shared with them")
		assert.Equal(t, read.ID, danaSees.decoded["data"].([]any)[0].(map[string]any)["reportId"])
		assert.Len(t, f.do(t, "GET", "/api/v1/analytics", f.memberToken, "", nil).decoded["data"], 2, "an owner manages every report")

		assert.Equal(t, 400, f.do(t, "GET", "/api/v1/analytics?limit=201", f.agentKey, "", nil).status)
		assert.Equal(t, 403, f.do(t, "GET", "/api/v1/analytics", f.readOnlyKey, "", nil).status)
		assert.Equal(t, 403, f.do(t, "GET", "/api/v1/analytics", f.adminKey, "", nil).status)
		other := f.do(t, "GET", "/api/v1/analytics", f.otherAgent, "", nil)
		assert.Equal(t, 402, other.status, "the other organisation is still on free")
	})
}
