package models_test

import (
	"context"
	"encoding/json"
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
)

var agent = models.Actor{ID: "key_agent", Name: "reporter"}

func publication(state string) models.Publication {
	return models.Publication{State: state, By: agent,
		Files: []models.ManifestFile{{Path: "index.html", SHA256: "ab", Size: 10}}}
}

func reportData(r *models.Report, v *models.ReportVersion) ([]byte, error) {
	return json.Marshal(map[string]any{"id": r.ID, "version": v.Version})
}

func newReport(t *testing.T, s *models.Store, orgID, slug string) *models.Report {
	t.Helper()
	r, v, err := s.CreateReport(context.Background(), models.NewReport{OrganizationID: orgID, Title: "Q3", Slug: slug, SlugGiven: true,
		Classification: models.ClassInternal}, publication(models.VersionPublished), nil, reportData)
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
		org, other := newOrg(t, s), newOrg(t, s)

		// A first version the scan held: no live version yet.
		r, v1, err := s.CreateReport(ctx, models.NewReport{OrganizationID: org.ID, Title: "Weekly", Slug: "team/weekly", SlugGiven: true,
			Classification: models.ClassInternal}, publication(models.VersionHeld), nil, reportData)
		require.NoError(t, err)
		assert.Equal(t, models.VersionHeld, v1.Status(r))
		assert.Nil(t, r.LiveVersion)
		assert.Equal(t, 1, r.LatestVersion)

		two := 1
		r, v2, err := s.PublishVersion(ctx, org.ID, r.ID, &two, publication(models.VersionPublished), nil, reportData)
		require.NoError(t, err)
		assert.Equal(t, 2, v2.Version)
		assert.Equal(t, 2, *r.LiveVersion)
		_, _, err = s.PublishVersion(ctx, org.ID, r.ID, &two, publication(models.VersionPublished), nil, reportData)
		assert.True(t, apperr.Is(err, apperr.VersionConflict), "stale expectedVersion: %v", err)
		_, v3, err := s.PublishVersion(ctx, org.ID, r.ID, nil, publication(models.VersionDeclined), nil, reportData)
		require.NoError(t, err)
		_, v4, err := s.PublishVersion(ctx, org.ID, r.ID, nil, publication(models.VersionPublished), nil, reportData)
		require.NoError(t, err)
		assert.Equal(t, []int{3, 4}, []int{v3.Version, v4.Version}, "a declined version takes its number")

		// Rollback: only to a version that went live; another
		// organisation's report is not found.
		_, _, err = s.Rollback(ctx, org.ID, "team/weekly", 3, agent, reportData)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "declined: %v", err)
		_, _, err = s.Rollback(ctx, org.ID, "team/weekly", 1, agent, reportData)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "held: %v", err)
		_, _, err = s.Rollback(ctx, org.ID, "team/weekly", 9, agent, reportData)
		assert.True(t, apperr.Is(err, apperr.NotFound), "missing: %v", err)
		_, _, err = s.Rollback(ctx, other.ID, "team/weekly", 2, agent, reportData)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation: %v", err)
		r, _, err = s.Rollback(ctx, org.ID, r.ID, 2, agent, reportData)
		require.NoError(t, err)
		assert.Equal(t, 2, *r.LiveVersion)
		assert.Equal(t, 4, r.LatestVersion)
		r, _, err = s.Rollback(ctx, org.ID, r.ID, 4, agent, reportData)
		require.NoError(t, err)
		assert.Equal(t, 4, *r.LiveVersion, "rolling forward is the same call")

		// Releasing the held version 1 while 4 is live: it becomes previous.
		r, v1, err = s.DecideHeld(ctx, org.ID, v1.ID, true, models.Actor{ID: "mem_admin", Name: "Ada"}, reportData)
		require.NoError(t, err)
		assert.Equal(t, models.VersionPrevious, v1.Status(r))
		assert.Equal(t, 4, *r.LiveVersion)
		_, _, err = s.DecideHeld(ctx, org.ID, v1.ID, true, agent, reportData)
		require.NoError(t, err, "deciding the same way again is a no-op")
		_, _, err = s.DecideHeld(ctx, org.ID, v1.ID, false, agent, reportData)
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

		r, err = s.SetArchived(ctx, org.ID, r.ID, true, agent)
		require.NoError(t, err)
		assert.True(t, r.Archived)
		r, err = s.SetArchived(ctx, org.ID, r.ID, false, agent)
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
		org := newOrg(t, s)
		r := newReport(t, s, org.ID, "q3")
		_, held, err := s.PublishVersion(ctx, org.ID, r.ID, nil, publication(models.VersionHeld), nil, reportData)
		require.NoError(t, err)
		r, held, err = s.DecideHeld(ctx, org.ID, held.ID, true, agent, reportData)
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
		org, other := newOrg(t, s), newOrg(t, s)
		newReport(t, s, org.ID, "q3")
		newReport(t, s, other.ID, "q3") // slugs are per organisation
		_, _, err := s.CreateReport(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3", Slug: "q3", SlugGiven: true,
			Classification: models.ClassInternal}, publication(models.VersionPublished), nil, reportData)
		assert.True(t, apperr.Is(err, apperr.SlugTaken), "%v", err)
		r, _, err := s.CreateReport(ctx, models.NewReport{OrganizationID: org.ID, Title: "Q3", Slug: "q3",
			Classification: models.ClassInternal}, publication(models.VersionPublished), nil, reportData)
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
		org := newOrg(t, s)
		r := newReport(t, s, org.ID, "race")
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				one := 1
				_, _, errs[i] = s.PublishVersion(ctx, org.ID, r.ID, &one, publication(models.VersionPublished), nil, reportData)
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
				_, _, err := s.PublishVersion(ctx, org.ID, r.ID, nil, publication(models.VersionPublished), nil, reportData)
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

// TestUploadTickets: a ticket is consumed by the publish that reads it;
// another organisation's, an unknown or a consumed one is upload_not_found.
func TestUploadTickets(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := newOrg(t, s), newOrg(t, s)
		u, ticket, err := s.CreateUpload(ctx, org.ID, agent)
		require.NoError(t, err)
		assert.Regexp(t, `^upl_`, u.ID)
		assert.NotContains(t, u.TicketHash, ticket)

		_, err = s.GetUpload(ctx, org.ID, u.ID)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "nothing uploaded yet: %v", err)
		byTicket, err := s.UploadByTicket(ctx, ticket)
		require.NoError(t, err)
		require.NoError(t, s.ClaimUpload(ctx, byTicket.ID, "blob-1", models.Now().Add(time.Minute)))
		require.NoError(t, s.MarkUploaded(ctx, byTicket.ID, "blob-1", "text/html", 10))
		assert.True(t, apperr.Is(s.MarkUploaded(ctx, byTicket.ID, "blob-2", "text/html", 10), apperr.InvalidState), "a second PUT")
		_, err = s.GetUpload(ctx, other.ID, u.ID)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "another organisation: %v", err)

		pub := publication(models.VersionPublished)
		pub.UploadID = u.ID
		_, _, err = s.CreateReport(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil, reportData)
		require.NoError(t, err)
		_, err = s.GetUpload(ctx, org.ID, u.ID)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "consumed: %v", err)
		_, err = s.UploadByTicket(ctx, ticket)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "consumed ticket: %v", err)
		_, _, err = s.CreateReport(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil, reportData)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "a second publish: %v", err)
		_, err = s.UploadByTicket(ctx, "nope")
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "%v", err)
	})
}

// TestUploadClaims: one PUT at a time claims an upload, before reading
// its body; a claim is let go when its body fails, lapses at its time,
// and only the PUT holding it stores the content.
func TestUploadClaims(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := newOrg(t, s)
		u, _, err := s.CreateUpload(ctx, org.ID, agent)
		require.NoError(t, err)
		later := models.Now().Add(time.Minute)

		require.NoError(t, s.ClaimUpload(ctx, u.ID, "put-1", later))
		err = s.ClaimUpload(ctx, u.ID, "put-2", later)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "a racing PUT: %v", err)
		assert.Contains(t, err.Error(), "another PUT is sending")
		assert.True(t, apperr.Is(s.MarkUploaded(ctx, u.ID, "put-2", "text/html", 1), apperr.InvalidState), "only the claim's PUT stores")

		require.NoError(t, s.ReleaseUpload(ctx, u.ID, "put-2"), "another PUT's release lets nothing go")
		assert.True(t, apperr.Is(s.ClaimUpload(ctx, u.ID, "put-3", later), apperr.InvalidState))
		require.NoError(t, s.ReleaseUpload(ctx, u.ID, "put-1"))
		require.NoError(t, s.ClaimUpload(ctx, u.ID, "put-3", models.Now().Add(-time.Second)), "a failed PUT's upload may be sent again")
		require.NoError(t, s.ClaimUpload(ctx, u.ID, "put-4", later), "a lapsed claim is taken over")
		assert.True(t, apperr.Is(s.MarkUploaded(ctx, u.ID, "put-3", "text/html", 1), apperr.InvalidState), "the lapsed PUT lost its claim")
		require.NoError(t, s.MarkUploaded(ctx, u.ID, "put-4", "text/html", 7))

		err = s.ClaimUpload(ctx, u.ID, "put-5", later)
		assert.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
		assert.Contains(t, err.Error(), "already has its content")
		got, err := s.GetUpload(ctx, org.ID, u.ID)
		require.NoError(t, err)
		assert.Equal(t, "put-4", got.Blob)
		assert.EqualValues(t, 7, got.Size)
		assert.Nil(t, got.ReceivingUntil)
		assert.True(t, apperr.Is(s.ClaimUpload(ctx, "upl_nope", "put-6", later), apperr.UploadNotFound))
	})
}

// TestScheduleDueOncePerMoment: schedule.due is written once per moment,
// never for an earlier one, and not at all for a schedule that is gone.
func TestScheduleDueOncePerMoment(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := newOrg(t, s)
		r := newReport(t, s, org.ID, "weekly")
		sc := &models.Schedule{ID: models.NewScheduleID(), OrganizationID: org.ID, ReportID: r.ID, Timezone: "UTC", CreatedBy: "key_1", CreatedByName: "agent"}
		_, err := s.CreateSchedule(ctx, sc, nil)
		require.NoError(t, err)
		data := func(sc *models.Schedule, r *models.Report) ([]byte, error) {
			return json.Marshal(map[string]string{"s": sc.ID, "r": r.ID})
		}
		at := models.Now()
		for i, c := range []struct {
			at    time.Time
			wrote bool
		}{{at, true}, {at, false}, {at.Add(-time.Minute), false}, {at.Add(time.Hour), true}} {
			wrote, err := s.ScheduleDue(ctx, org.ID, sc.ID, c.at, data)
			require.NoError(t, err)
			assert.Equal(t, c.wrote, wrote, "call %d", i)
		}
		evs, err := s.ListEvents(ctx, org.ID, sc.ID)
		require.NoError(t, err)
		assert.Len(t, evs, 2)
		require.NoError(t, s.DeleteSchedule(ctx, org.ID, sc.ID))
		wrote, err := s.ScheduleDue(ctx, org.ID, sc.ID, at.Add(2*time.Hour), data)
		require.NoError(t, err)
		assert.False(t, wrote)
	})
}
