package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
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
	r, v, err := reports.Versions{Store: s}.Create(context.Background(), models.NewReport{OrganizationID: orgID, Title: "Q3", Slug: slug, SlugGiven: true,
		Classification: models.ClassInternal}, publication(models.VersionPublished), nil)
	require.NoError(t, err)
	require.Equal(t, 1, v.Version)
	return r
}

// TestUploadTickets: a ticket is found by its hash, an upload by its
// organisation only, and a publish that reads it uses it up once (what
// each state answers is the reports service's: reports/uploads_test.go
// and the API's upload tests).
func TestUploadTickets(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		u, ticket, err := s.CreateUpload(ctx, org.ID, agent)
		require.NoError(t, err)
		assert.Regexp(t, `^upl_`, u.ID)
		assert.NotContains(t, u.TicketHash, ticket)

		byTicket, err := s.UploadByTicket(ctx, ticket)
		require.NoError(t, err)
		assert.Equal(t, u.ID, byTicket.ID)
		_, err = s.UploadByTicket(ctx, "nope")
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
		_, err = s.GetUpload(ctx, other.ID, u.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "another organisation: %v", err)

		claimed, err := s.ClaimUpload(ctx, u.ID, "blob-1", models.Now().Add(time.Minute))
		require.NoError(t, err)
		require.True(t, claimed)
		stored, err := s.MarkUploaded(ctx, u.ID, "blob-1", "text/html", 10)
		require.NoError(t, err)
		require.True(t, stored)

		pub := publication(models.VersionPublished)
		pub.UploadID = u.ID
		_, _, err = reports.Versions{Store: s}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil)
		require.NoError(t, err)
		got, err := s.GetUpload(ctx, org.ID, u.ID)
		require.NoError(t, err)
		assert.NotNil(t, got.ConsumedAt, "the publish used it up")
		_, _, err = reports.Versions{Store: s}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "a second publish: %v", err)
		claimed, err = s.ClaimUpload(ctx, u.ID, "blob-2", models.Now().Add(time.Minute))
		require.NoError(t, err)
		assert.False(t, claimed, "a used upload")
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
		org := testenv.NewOrg(t, s)
		u, _, err := s.CreateUpload(ctx, org.ID, agent)
		require.NoError(t, err)
		later := models.Now().Add(time.Minute)
		claim := func(blob string, until time.Time) bool {
			t.Helper()
			ok, err := s.ClaimUpload(ctx, u.ID, blob, until)
			require.NoError(t, err)
			return ok
		}
		mark := func(blob string, size int64) bool {
			t.Helper()
			ok, err := s.MarkUploaded(ctx, u.ID, blob, "text/html", size)
			require.NoError(t, err)
			return ok
		}

		require.True(t, claim("put-1", later))
		assert.False(t, claim("put-2", later), "a racing PUT")
		assert.False(t, mark("put-2", 1), "only the claim's PUT stores")

		require.NoError(t, s.ReleaseUpload(ctx, u.ID, "put-2"), "another PUT's release lets nothing go")
		assert.False(t, claim("put-3", later))
		require.NoError(t, s.ReleaseUpload(ctx, u.ID, "put-1"))
		require.True(t, claim("put-3", models.Now().Add(-time.Second)), "a failed PUT's upload may be sent again")
		require.True(t, claim("put-4", later), "a lapsed claim is taken over")
		assert.False(t, mark("put-3", 1), "the lapsed PUT lost its claim")
		require.True(t, mark("put-4", 7))

		assert.False(t, claim("put-5", later), "an upload with its content")
		got, err := s.GetUpload(ctx, org.ID, u.ID)
		require.NoError(t, err)
		assert.Equal(t, "put-4", got.Blob)
		assert.EqualValues(t, 7, got.Size)
		assert.Nil(t, got.ReceivingUntil)
		ok, err := s.ClaimUpload(ctx, "upl_nope", "put-6", later)
		require.NoError(t, err)
		assert.False(t, ok, "an unknown upload")
	})
}

// TestHostedReport: a report's host reads the report and its own
// organisation's origins in one statement, never another's.
func TestHostedReport(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		mine, theirs := models.StringList{"https://cdn.example.com"}, models.StringList{"https://elsewhere.example"}
		_, err := s.UpdateOrganization(ctx, org.ID, models.OrganizationChange{ReportOrigins: &mine})
		require.NoError(t, err)
		_, err = s.UpdateOrganization(ctx, other.ID, models.OrganizationChange{ReportOrigins: &theirs})
		require.NoError(t, err)
		r := newReport(t, s, org.ID, "hosted")
		newReport(t, s, other.ID, "hosted")

		got, origins, err := s.Reports().HostedReport(ctx, r.Key)
		require.NoError(t, err)
		assert.Equal(t, r.ID, got.ID)
		assert.Equal(t, r.Title, got.Title)
		assert.Equal(t, org.ID, got.OrganizationID)
		assert.Equal(t, mine, origins)

		_, _, err = s.Reports().HostedReport(ctx, "nope")
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	})
}
