package reports_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

var agent = models.Actor{ID: "key_agent", Name: "reporter"}

func publication(state string) models.Publication {
	return models.Publication{State: state, By: agent,
		Files: []models.ManifestFile{{Path: "index.html", SHA256: "ab", Size: 10}}}
}

func newReport(t *testing.T, s *models.Store, orgID, slug string) *models.Report {
	t.Helper()
	r, v, err := reports.Versions{Store: s}.Create(context.Background(), models.NewReport{OrganizationID: orgID, Title: "Q3", Slug: slug,
		SlugGiven: true, Classification: models.ClassInternal}, publication(models.VersionPublished), nil)
	require.NoError(t, err)
	require.Equal(t, 1, v.Version)
	return r
}

// TestReportVersionsInTheReadModel: versions take numbers in order, held
// and declined ones too; only published ones go live; rollback moves the
// live version among published ones and writes report.updated; the first
// live version is report.published; events and audit entries sit beside.
func TestReportVersionsInTheReadModel(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		w := reports.Versions{Store: s}
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)

		// A first version the scan held: no live version yet.
		r, v1, err := w.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Weekly", Slug: "team/weekly", SlugGiven: true,
			Classification: models.ClassInternal}, publication(models.VersionHeld), nil)
		require.NoError(t, err)
		assert.Equal(t, models.VersionHeld, v1.Status(r))
		assert.Nil(t, r.LiveVersion)
		assert.Equal(t, 1, r.LatestVersion)

		two := 1
		r, v2, err := w.Publish(ctx, org.ID, r.ID, &two, publication(models.VersionPublished), nil)
		require.NoError(t, err)
		assert.Equal(t, 2, v2.Version)
		assert.Equal(t, 2, *r.LiveVersion)
		_, _, err = w.Publish(ctx, org.ID, r.ID, &two, publication(models.VersionPublished), nil)
		assert.True(t, apperr.Is(err, apperr.VersionConflict), "stale expectedVersion: %v", err)
		_, v3, err := w.Publish(ctx, org.ID, r.ID, nil, publication(models.VersionDeclined), nil)
		require.NoError(t, err)
		_, v4, err := w.Publish(ctx, org.ID, r.ID, nil, publication(models.VersionPublished), nil)
		require.NoError(t, err)
		assert.Equal(t, []int{3, 4}, []int{v3.Version, v4.Version}, "a declined version takes its number")

		// Rollback: only to a version that went live; another
		// organisation's report is not found.
		_, _, err = w.Rollback(ctx, org.ID, r.ID, 3, agent)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "declined: %v", err)
		_, _, err = w.Rollback(ctx, org.ID, r.ID, 1, agent)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "held: %v", err)
		_, _, err = w.Rollback(ctx, org.ID, r.ID, 9, agent)
		assert.True(t, apperr.Is(err, apperr.NotFound), "missing: %v", err)
		_, _, err = w.Rollback(ctx, other.ID, r.ID, 2, agent)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation: %v", err)
		r, _, err = w.Rollback(ctx, org.ID, r.ID, 2, agent)
		require.NoError(t, err)
		assert.Equal(t, 2, *r.LiveVersion)
		assert.Equal(t, 4, r.LatestVersion)
		r, _, err = w.Rollback(ctx, org.ID, r.ID, 4, agent)
		require.NoError(t, err)
		assert.Equal(t, 4, *r.LiveVersion, "rolling forward is the same call")

		// Releasing the held version 1 while 4 is live: it becomes previous.
		r, v1, err = w.DecideHeld(ctx, org.ID, v1.ID, true, models.Actor{ID: "mem_admin", Name: "Ada"})
		require.NoError(t, err)
		assert.Equal(t, models.VersionPrevious, v1.Status(r))
		assert.Equal(t, 4, *r.LiveVersion)
		_, _, err = w.DecideHeld(ctx, org.ID, v1.ID, true, agent)
		require.NoError(t, err, "deciding the same way again is a no-op")
		_, _, err = w.DecideHeld(ctx, org.ID, v1.ID, false, agent)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "declining a released version: %v", err)

		var kinds []string
		evs, err := s.ListEvents(ctx, org.ID, r.ID)
		require.NoError(t, err)
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		assert.Equal(t, []string{events.PublishHeld, events.ReportPublished, events.ReportUpdated,
			events.ReportUpdated, events.ReportUpdated}, kinds,
			"held 1, publish 2, publish 4, rollback to 2, forward to 4; the declined 3 and the release of 1 as previous send nothing")

		vs, err := s.ListVersions(ctx, r)
		require.NoError(t, err)
		var statuses []string
		for _, v := range vs {
			statuses = append(statuses, v.Status(r))
		}
		assert.Equal(t, []string{"live", "declined", "previous", "previous"}, statuses)

		r, err = w.SetArchived(ctx, org.ID, r.ID, true, agent)
		require.NoError(t, err)
		assert.True(t, r.Archived)
		r, err = w.SetArchived(ctx, org.ID, r.ID, false, agent)
		require.NoError(t, err)
		assert.False(t, r.Archived)
		assert.Equal(t, 4, *r.LiveVersion, "restored with the same live version")
	})
}

// TestReleasedHeldVersionGoesLive: a held version released while nothing
// newer is live goes live as if published then.
func TestReleasedHeldVersionGoesLive(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		w := reports.Versions{Store: s}
		org := testenv.NewOrg(t, s)
		r := newReport(t, s, org.ID, "q3")
		_, held, err := w.Publish(ctx, org.ID, r.ID, nil, publication(models.VersionHeld), nil)
		require.NoError(t, err)
		r, held, err = w.DecideHeld(ctx, org.ID, held.ID, true, agent)
		require.NoError(t, err)
		assert.Equal(t, models.VersionLive, held.Status(r))
		assert.Equal(t, 2, *r.LiveVersion)
	})
}

// TestSlugs: a given slug that is taken is a 409; a derived one gets a
// numbered suffix.
func TestSlugs(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		w := reports.Versions{Store: s}
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		newReport(t, s, org.ID, "q3")
		newReport(t, s, other.ID, "q3") // slugs are per organisation
		_, _, err := w.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3", Slug: "q3", SlugGiven: true,
			Classification: models.ClassInternal}, publication(models.VersionPublished), nil)
		assert.True(t, apperr.Is(err, apperr.SlugTaken), "%v", err)
		r, _, err := w.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3", Slug: "q3",
			Classification: models.ClassInternal}, publication(models.VersionPublished), nil)
		require.NoError(t, err)
		assert.Equal(t, "q3-2", r.Slug)
	})
}

// TestConcurrentPublishesExpectingTheSameVersion: of many publishes that
// expect the same latest version, exactly one wins; the rest get
// version_conflict and no number is skipped.
func TestConcurrentPublishesExpectingTheSameVersion(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		w := reports.Versions{Store: s}
		org := testenv.NewOrg(t, s)
		r := newReport(t, s, org.ID, "race")
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				one := 1
				_, _, errs[i] = w.Publish(ctx, org.ID, r.ID, &one, publication(models.VersionPublished), nil)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				assert.True(t, apperr.Is(err, apperr.VersionConflict), "%v", err)
			}
		}
		assert.Equal(t, 1, won)
		r, err := s.GetReport(ctx, org.ID, r.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, r.LatestVersion)

		// Without expectedVersion, concurrent publishes all land, numbered
		// without gaps.
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := w.Publish(ctx, org.ID, r.ID, nil, publication(models.VersionPublished), nil)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		vs, err := s.ListVersions(ctx, r)
		require.NoError(t, err)
		require.Len(t, vs, 2+n)
		for i, v := range vs {
			assert.Equal(t, 2+n-i, v.Version)
		}
	})
}

// TestScheduleDueOncePerMoment: schedule.due is written once per moment,
// never for an earlier one, and not at all for a schedule that is gone.
func TestScheduleDueOncePerMoment(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		w := reports.Versions{Store: s, BaseURL: "https://assent.example"}
		org := testenv.NewOrg(t, s)
		r := newReport(t, s, org.ID, "weekly")
		sc := &models.Schedule{ID: models.NewScheduleID(), OrganizationID: org.ID, ReportID: r.ID, Timezone: "UTC", CreatedBy: "key_1", CreatedByName: "agent"}
		require.NoError(t, s.Tx(ctx, func(ctx context.Context) error { return s.InsertSchedule(ctx, sc) }))
		at := models.Now()
		for i, c := range []struct {
			at    time.Time
			wrote bool
		}{{at, true}, {at, false}, {at.Add(-time.Minute), false}, {at.Add(time.Hour), true}} {
			wrote, err := w.ScheduleDue(ctx, org.ID, sc.ID, c.at)
			require.NoError(t, err)
			assert.Equal(t, c.wrote, wrote, "call %d", i)
		}
		evs, err := s.ListEvents(ctx, org.ID, sc.ID)
		require.NoError(t, err)
		assert.Len(t, evs, 2)
		require.NoError(t, s.DeleteSchedule(ctx, org.ID, sc.ID))
		wrote, err := w.ScheduleDue(ctx, org.ID, sc.ID, at.Add(2*time.Hour))
		require.NoError(t, err)
		assert.False(t, wrote)
	})
}
