package models_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestReadingUnderRaces: of many redemptions of one ticket one wins; many
// first views at once notify once; many first requests for access at once
// write access.requested once, without an error. On both databases.
func TestReadingUnderRaces(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		m, err := s.CreateMember(ctx, org.ID, "bo@example.com", "Bo", "")
		require.NoError(t, err)
		sess, _, err := s.CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		r := newReport(t, s, org.ID, "raced")
		person := &models.Person{Organization: org, Member: m}
		data := func(*models.Report, *models.Person) ([]byte, error) { return []byte(`{}`), nil }

		ticket, err := s.IssueReaderTicket(ctx, r.ID, sess.ID)
		require.NoError(t, err)
		other := newReport(t, s, org.ID, "other")
		_, err = s.RedeemReaderTicket(ctx, ticket, other.ID)
		assert.ErrorIs(t, err, models.ErrReaderTicketInvalid, "a ticket opens its own report only")

		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		var won, lost int
		var errs []error
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				token, err := s.RedeemReaderTicket(ctx, ticket, r.ID)
				viewErr := s.RecordView(ctx, r, 1, person, viewEvery, func(*models.Report, *models.Person, *models.ReportView) ([]byte, error) { return []byte(`{}`), nil })
				_, accessErr := s.RequestAccess(ctx, r, person, 24*time.Hour, data)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && token != "":
					won++
				case errors.Is(err, models.ErrReaderTicketInvalid):
					lost++
				default:
					errs = append(errs, err)
				}
				for _, e := range []error{viewErr, accessErr} {
					if e != nil {
						errs = append(errs, e)
					}
				}
			}()
		}
		wg.Wait()
		require.Empty(t, errs)
		assert.Equal(t, 1, won, "a ticket is used once")
		assert.Equal(t, n-1, lost)
		views, err := s.Views(ctx, r.ID)
		require.NoError(t, err)
		assert.Len(t, views, n, "every view is recorded")
		evs, err := s.ListEvents(ctx, org.ID, r.ID)
		require.NoError(t, err)
		count := map[string]int{}
		for _, e := range evs {
			count[e.Kind]++
		}
		assert.Equal(t, 1, count[events.ReportViewed], "report.viewed once per viewer in 30 minutes")
		assert.Equal(t, 1, count[events.AccessRequested], "access.requested once a day")

		// Half an hour on, the next view notifies again.
		require.NoError(t, db.Model(&models.ViewNotice{}).Where("report_id = ?", r.ID).
			Update("notified_at", time.Now().Add(-viewEvery-time.Second)).Error)
		require.NoError(t, s.RecordView(ctx, r, 1, person, viewEvery, func(*models.Report, *models.Person, *models.ReportView) ([]byte, error) { return []byte(`{}`), nil }))
		evs, err = s.ListEvents(ctx, org.ID, r.ID)
		require.NoError(t, err)
		viewed := 0
		for _, e := range evs {
			if e.Kind == events.ReportViewed {
				viewed++
			}
		}
		assert.Equal(t, 2, viewed)

		// A public reader not signed in is a viewer of their own: notified
		// once, without touching the member's notice.
		noop := func(*models.Report, *models.Person, *models.ReportView) ([]byte, error) { return []byte(`{}`), nil }
		for range 2 {
			require.NoError(t, s.RecordView(ctx, r, 1, nil, viewEvery, noop))
		}
		require.NoError(t, s.RecordView(ctx, r, 1, person, viewEvery, noop))
		evs, err = s.ListEvents(ctx, org.ID, r.ID)
		require.NoError(t, err)
		viewed = 0
		for _, e := range evs {
			if e.Kind == events.ReportViewed {
				viewed++
			}
		}
		assert.Equal(t, 3, viewed)
	})
}

// viewEvery is how seldom the tests' views notify.
const viewEvery = 30 * time.Minute
