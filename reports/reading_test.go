package reports_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
)

// TestReadingUnderRaces: many first views at once notify once
// (report.viewed once per viewer per reports.ViewEventEvery), many first
// requests for access at once write access.requested once, without an
// error; a public reader not signed in is a viewer of their own. On both
// databases.
func TestReadingUnderRaces(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := reports.New(reports.Deps{Store: store, BaseURL: "https://assent.example"})
		people := testenv.NewPeople(t, store, "agent")
		r, _, err := reports.Versions{Store: store}.Create(ctx, models.NewReport{OrganizationID: people.ID, Title: "Q3", Slug: "raced", SlugGiven: true,
			Classification: models.ClassInternal}, models.Publication{State: models.VersionPublished, By: people.Agent}, nil)
		require.NoError(t, err)
		count := func(kind string) (n int) {
			evs, err := store.ListEvents(ctx, people.ID, r.ID)
			require.NoError(t, err)
			for _, e := range evs {
				if e.Kind == kind {
					n++
				}
			}
			return n
		}

		const n = 8
		errs := make([]error, 2*n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				errs[2*i] = svc.RecordView(ctx, r, 1, people.Bob)
				_, errs[2*i+1] = svc.RequestAccess(ctx, r, people.Bob.Actor())
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		views, err := store.Views(ctx, r.ID)
		require.NoError(t, err)
		assert.Len(t, views, n, "every view is recorded")
		assert.Equal(t, 1, count(events.ReportViewed), "report.viewed once per viewer in the interval")
		assert.Equal(t, 1, count(events.AccessRequested), "access.requested once in its interval")
		var viewed map[string]any
		evs, err := store.ListEvents(ctx, people.ID, r.ID)
		require.NoError(t, err)
		for _, e := range evs {
			if e.Kind == events.ReportViewed {
				require.NoError(t, json.Unmarshal(e.Data, &viewed))
			}
		}
		assert.Equal(t, people.Bob.ID(), viewed["viewer"].(map[string]any)["id"], "the data names the viewer")

		// An interval on, the next view notifies again.
		require.NoError(t, db.Model(&models.ViewNotice{}).Where("report_id = ?", r.ID).
			Update("notified_at", time.Now().Add(-reports.ViewEventEvery-time.Second)).Error)
		require.NoError(t, svc.RecordView(ctx, r, 1, people.Bob))
		assert.Equal(t, 2, count(events.ReportViewed))

		// A public reader not signed in is a viewer of their own: notified
		// once, without touching the member's notice.
		for range 2 {
			require.NoError(t, svc.RecordView(ctx, r, 1, nil))
		}
		require.NoError(t, svc.RecordView(ctx, r, 1, people.Bob))
		assert.Equal(t, 3, count(events.ReportViewed))
	})
}

// TestReaderTicketsUnderRaces: a ticket opens its own report only, and of
// many redemptions of one ticket one wins; the reader session it starts
// signs its person in until the app session it came from ends. On both
// databases.
func TestReaderTicketsUnderRaces(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := reports.New(reports.Deps{Store: store, BaseURL: "https://assent.example"})
		people := testenv.NewPeople(t, store, "agent")
		report := func(slug string) *models.Report {
			r, _, err := reports.Versions{Store: store}.Create(ctx, models.NewReport{OrganizationID: people.ID, Title: slug, Slug: slug,
				SlugGiven: true, Classification: models.ClassInternal}, models.Publication{State: models.VersionPublished, By: people.Agent}, nil)
			require.NoError(t, err)
			return r
		}
		r, other := report("raced"), report("other")
		sess, _, err := accounts.New(store).CreateSession(ctx, people.ID, people.Bob.ID())
		require.NoError(t, err)

		ticket, err := svc.ReaderTicket(ctx, r, sess.ID)
		require.NoError(t, err)
		_, err = svc.RedeemTicket(ctx, ticket, other.ID)
		assert.ErrorIs(t, err, reports.ErrReaderTicketInvalid, "a ticket opens its own report only")

		const n = 8
		tokens, errs := make([]string, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { tokens[i], errs[i] = svc.RedeemTicket(ctx, ticket, r.ID) })
		}
		wg.Wait()
		var won string
		for i, err := range errs {
			if err == nil {
				require.Empty(t, won, "a ticket is used once")
				won = tokens[i]
				continue
			}
			assert.ErrorIs(t, err, reports.ErrReaderTicketInvalid)
		}
		require.NotEmpty(t, won, "one redemption wins")

		reader, err := svc.Reader(ctx, won, r.ID)
		require.NoError(t, err)
		require.NotNil(t, reader)
		assert.Equal(t, people.Bob.ID(), reader.ID())
		nobody, err := svc.Reader(ctx, won, other.ID)
		require.NoError(t, err)
		assert.Nil(t, nobody, "a reader session is its report's alone")
		require.NoError(t, accounts.New(store).DeleteSession(ctx, people.ID, sess.ID))
		nobody, err = svc.Reader(ctx, won, r.ID)
		require.NoError(t, err)
		assert.Nil(t, nobody, "signing out of the app ends the reader session")
	})
}
