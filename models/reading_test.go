package models_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestReadingUnderRaces: of many redemptions of one ticket one wins. On
// both databases. (Views and requests for access race in the reports
// service's tests.)
func TestReadingUnderRaces(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		m, err := s.CreateMember(ctx, org.ID, "bo@example.com", "Bo", "")
		require.NoError(t, err)
		sess, _, err := accounts.New(s).CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		r := newReport(t, s, org.ID, "raced")

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
			}()
		}
		wg.Wait()
		require.Empty(t, errs)
		assert.Equal(t, 1, won, "a ticket is used once")
		assert.Equal(t, n-1, lost)
	})
}
