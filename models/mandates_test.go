package models_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestMandateOncePerApproval: an approval's page granting its mandate
// twice at once (a double click) stores one, and both answers name it.
func TestMandateOncePerApproval(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		approval := "apr_01double"
		count := 3
		granted := make([]string, 8)
		var wg sync.WaitGroup
		for i := range granted {
			wg.Go(func() {
				m := &models.Mandate{OrganizationID: org.ID, Action: "refund.create", Agents: models.StringList{}, BudgetCount: &count,
					BudgetWindow: models.WindowDay, StartsAt: models.Now(), ExpiresAt: models.Now().Add(time.Hour), GranterID: "mem_1",
					GranterName: "Bob", ApprovalID: &approval}
				err := s.CreateMandate(ctx, models.MandateRecord{Mandate: m, Actor: models.Actor{ID: "mem_1", Name: "Bob"},
					EventData: func(*models.Mandate) ([]byte, error) { return []byte(`{}`), nil }})
				assert.NoError(t, err)
				granted[i] = m.ID
			})
		}
		wg.Wait()
		var rows int64
		require.NoError(t, db.Model(&models.Mandate{}).Count(&rows).Error)
		assert.EqualValues(t, 1, rows)
		for _, id := range granted {
			assert.Equal(t, granted[0], id)
		}
		var events int64
		require.NoError(t, db.Model(&models.Event{}).Where("kind = ?", "mandate.granted").Count(&events).Error)
		assert.EqualValues(t, 1, events, "granted once")
		require.NoError(t, s.VerifyAuditChain(ctx, org.ID))
	})
}
