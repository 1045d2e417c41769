package reports_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// lapsing is a PUT's body during whose sending its claim lapses and
// another PUT takes the upload over.
type lapsing struct {
	io.Reader
	takeOver func()
	once     bool
}

func (l *lapsing) Read(p []byte) (int, error) {
	if !l.once {
		l.once = true
		l.takeOver()
	}
	return l.Reader.Read(p)
}

// TestReceiveAnswersEachUploadState: a PUT stores the content of an
// upload that may receive it; a second PUT after it is told the upload has
// its content, one whose claim lapsed while it sent is told so and stores
// nothing, and a ticket expired or used by a publish is not found.
func TestReceiveAnswersEachUploadState(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		blobs, err := blobstore.Open(ctx, "", t.TempDir())
		require.NoError(t, err)
		svc := reports.New(reports.Deps{Store: s, Blobs: blobs})
		by := models.Actor{ID: "key_agent", Name: "reporter", Organization: org}
		ticketOf := func(url string) string { return url[strings.LastIndex(url, "/")+1:] }

		_, url, err := svc.CreateUpload(ctx, by)
		require.NoError(t, err)
		got, err := svc.Receive(ctx, ticketOf(url), "text/html", strings.NewReader("<p>Q3</p>"))
		require.NoError(t, err)
		assert.EqualValues(t, len("<p>Q3</p>"), got.Size)
		_, err = svc.Receive(ctx, ticketOf(url), "text/html", strings.NewReader("<p>again</p>"))
		require.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
		assert.Contains(t, err.Error(), "already has its content")

		lapsed, url, err := svc.CreateUpload(ctx, by)
		require.NoError(t, err)
		body := &lapsing{Reader: strings.NewReader("<p>slow</p>"), takeOver: func() {
			require.NoError(t, db.Model(&models.Upload{}).Where("id = ?", lapsed.ID).
				Update("receiving_until", models.Now().Add(-time.Second)).Error)
			claimed, err := s.ClaimUpload(ctx, lapsed.ID, "another-put", models.Now().Add(time.Minute))
			require.NoError(t, err)
			require.True(t, claimed)
		}}
		_, err = svc.Receive(ctx, ticketOf(url), "text/html", body)
		require.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
		assert.Contains(t, err.Error(), "claim on the upload lapsed")
		stored, err := s.GetUpload(ctx, org.ID, lapsed.ID)
		require.NoError(t, err)
		assert.Nil(t, stored.UploadedAt, "the lapsed PUT stored nothing")
		assert.Equal(t, "another-put", stored.Blob)

		expired, url, err := svc.CreateUpload(ctx, by)
		require.NoError(t, err)
		require.NoError(t, db.Model(&models.Upload{}).Where("id = ?", expired.ID).Update("expires_at", models.Now().Add(-time.Second)).Error)
		_, err = svc.Receive(ctx, ticketOf(url), "text/html", strings.NewReader("<p>late</p>"))
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "an expired ticket: %v", err)
		_, err = svc.Receive(ctx, "nope", "text/html", strings.NewReader("<p>x</p>"))
		assert.True(t, apperr.Is(err, apperr.UploadNotFound), "an unknown ticket: %v", err)
	})
}
