package gate

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestMandateOncePerApproval: an approval's page granting its mandate
// twice at once (a double click) stores one, and both answers name it;
// revoking it twice at once ends it once.
func TestMandateOncePerApproval(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		s := &Service{store: store, issuer: "https://assent.example"}
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		bob := models.Actor{ID: "mem_1", Name: "Bob", Organization: org}
		approval := "apr_01double"
		count := 3
		granted := make([]string, 8)
		var wg sync.WaitGroup
		for i := range granted {
			wg.Go(func() {
				m := &models.Mandate{OrganizationID: org.ID, Action: "refund.create", Agents: models.StringList{}, BudgetCount: &count,
					BudgetWindow: models.WindowDay, StartsAt: models.Now(), ExpiresAt: models.Now().Add(time.Hour), GranterID: "mem_1",
					GranterName: "Bob", ApprovalID: &approval}
				assert.NoError(t, s.create(ctx, bob, m))
				granted[i] = m.ID
			})
		}
		wg.Wait()
		var rows int64
		require.NoError(t, db.Model(&models.Mandate{}).Where("organization_id = ?", org.ID).Count(&rows).Error)
		assert.EqualValues(t, 1, rows)
		for _, id := range granted {
			assert.Equal(t, granted[0], id)
		}
		kinds := func(kind string) (n int64) {
			require.NoError(t, db.Model(&models.Event{}).Where("organization_id = ? AND kind = ?", org.ID, kind).Count(&n).Error)
			return n
		}
		assert.EqualValues(t, 1, kinds("mandate.granted"), "granted once")

		refused := make([]error, 4)
		for i := range refused {
			wg.Go(func() { _, refused[i] = s.revoke(ctx, bob, org.ID, granted[0]) })
		}
		wg.Wait()
		ok := 0
		for _, err := range refused {
			if err == nil {
				ok++
			} else {
				assert.True(t, apperr.Is(err, apperr.InvalidState), "%v", err)
			}
		}
		assert.Equal(t, 1, ok, "revoked once")
		assert.EqualValues(t, 1, kinds("mandate.revoked"))
		require.NoError(t, store.VerifyAuditChain(ctx, org.ID))
	})
}
