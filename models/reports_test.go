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

// TestUploadTickets: a ticket is consumed by the publish that reads it;
// another organisation's, an unknown or a consumed one is upload_not_found.
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
		_, _, err = reports.Versions{Store: s}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil)
		require.NoError(t, err)
		_, err = s.GetUpload(ctx, org.ID, u.ID)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "consumed: %v", err)
		_, err = s.UploadByTicket(ctx, ticket)
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "consumed ticket: %v", err)
		_, _, err = reports.Versions{Store: s}.Create(ctx, models.NewReport{OrganizationID: org.ID, Title: "Up", Slug: "up", Classification: models.ClassInternal},
			pub, nil)
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
		org := testenv.NewOrg(t, s)
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
