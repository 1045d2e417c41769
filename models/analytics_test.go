package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// TestAnalyticsAddUpViews: totals, UTC days, recent readers and the
// organisation's reports add up the same on both databases; anonymous
// views count as views, never as readers; another organisation's views
// count nowhere.
func TestAnalyticsAddUpViews(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		bo, err := s.CreateMember(ctx, org.ID, "bo@example.com", "Bo", "")
		require.NoError(t, err)
		gus, _, err := s.CreateGuest(ctx, org.ID, "gus@partner.example", "")
		require.NoError(t, err)
		r := newReport(t, s, org.ID, "read")
		quiet := newReport(t, s, org.ID, "quiet")
		archived := newReport(t, s, org.ID, "archived")
		_, err = reports.Versions{Store: s}.SetArchived(ctx, org.ID, archived.ID, true, models.Actor{ID: "key_x", Name: "agent"})
		require.NoError(t, err)
		elsewhere := newReport(t, s, other.ID, "elsewhere")

		today := time.Now().UTC().Truncate(24 * time.Hour)
		view := func(rep *models.Report, viewer string, at time.Time) {
			require.NoError(t, db.Create(&models.ReportView{ID: ids.New(ids.View), OrganizationID: rep.OrganizationID,
				ReportID: rep.ID, ViewerID: viewer, Version: 1, At: at}).Error)
		}
		view(r, bo.ID, today.Add(-3*24*time.Hour+time.Hour)) // three days ago
		view(r, bo.ID, today.Add(time.Minute))
		view(r, gus.ID, today.Add(2*time.Minute))
		view(r, "", today.Add(3*time.Minute))
		view(r, "", today.Add(4*time.Minute))
		view(r, bo.ID, today.Add(-40*24*time.Hour)) // before the window
		view(archived, bo.ID, today)
		view(elsewhere, "", today)

		totals, err := s.ViewTotals(ctx, r)
		require.NoError(t, err)
		assert.Equal(t, models.ViewTotals{TotalViews: 6, AnonymousViews: 2, UniqueReaders: 2, InternalReaders: 1, ExternalReaders: 1}, *totals)

		days, err := s.DailyViews(ctx, r, today.Add(-29*24*time.Hour))
		require.NoError(t, err)
		assert.Equal(t, []models.DayViews{
			{Day: today.Add(-3 * 24 * time.Hour).Format(time.DateOnly), Views: 1, Readers: 1},
			{Day: today.Format(time.DateOnly), Views: 4, Readers: 2},
		}, days)

		recent, err := s.RecentReaders(ctx, r, 20, false)
		require.NoError(t, err)
		require.Len(t, recent, 2)
		assert.Equal(t, gus.ID, recent[0].ViewerID, "most recent first")
		assert.Equal(t, today.Add(2*time.Minute), recent[0].LastViewedAt)
		assert.Equal(t, bo.ID, recent[1].ViewerID)
		assert.EqualValues(t, 3, recent[1].Views)
		assert.Empty(t, recent[1].Name, "names only when asked for")
		named, err := s.RecentReaders(ctx, r, 1, true)
		require.NoError(t, err)
		require.Len(t, named, 1)
		assert.Equal(t, "gus@partner.example", named[0].Name, "a guest without a name goes by their email")
		assert.Equal(t, "gus@partner.example", named[0].Email)

		reach, next, err := s.ReportsReach(ctx, org.ID, nil, models.Page{Limit: 50})
		require.NoError(t, err)
		assert.Empty(t, next)
		require.Len(t, reach, 2, "the archived report is left out")
		assert.Equal(t, quiet.ID, reach[0].Report.ID, "newest first")
		assert.Zero(t, reach[0].TotalViews)
		assert.Nil(t, reach[0].LastViewedAt, "nobody opened it")
		assert.Equal(t, r.ID, reach[1].Report.ID)
		assert.EqualValues(t, 6, reach[1].TotalViews)
		assert.EqualValues(t, 2, reach[1].UniqueReaders)
		require.NotNil(t, reach[1].LastViewedAt)
		assert.Equal(t, today.Add(4*time.Minute), *reach[1].LastViewedAt)

		first, next, err := s.ReportsReach(ctx, org.ID, nil, models.Page{Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, next)
		second, _, err := s.ReportsReach(ctx, org.ID, nil, models.Page{Limit: 1, Cursor: next})
		require.NoError(t, err)
		assert.Equal(t, []string{quiet.ID, r.ID}, []string{first[0].Report.ID, second[0].Report.ID})

		reader := &models.Person{Organization: org, Member: bo}
		mine, _, err := s.ReportsReach(ctx, org.ID, reader, models.Page{Limit: 50})
		require.NoError(t, err)
		assert.Empty(t, mine, "nothing is shared with Bo")
	})
}
