package models_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestMandateUsageByWindow: a list of mandates with different windows
// reads each one's uses in its own window (one statement for the page),
// as a single mandate's read does.
func TestMandateUsageByWindow(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		now, count := models.Now(), 100
		ago := []time.Duration{30 * time.Minute, 5 * time.Hour, 3 * 24 * time.Hour, 10 * 24 * time.Hour}
		want := map[string]models.MandateUsage{}
		for i, w := range append(slices.Clone(models.MandateWindows), models.WindowDay) {
			m := &models.Mandate{OrganizationID: org.ID, Action: "refund.create", Agents: models.StringList{}, BudgetCount: &count,
				BudgetWindow: w, StartsAt: now.Add(-30 * 24 * time.Hour), ExpiresAt: now.Add(time.Hour), GranterID: "mem_1", GranterName: "Bob"}
			m.ID = fmt.Sprintf("mdt_%d", i)
			require.NoError(t, db.Create(m).Error)
			if i == len(models.MandateWindows) {
				want[m.ID] = models.MandateUsage{} // the last has no uses
				continue
			}
			// Uses 30 minutes, 5 hours, 3 days and 10 days ago, spending
			// 1, 2, 4 and 8: the window of the i-th holds the first i+1.
			u := models.MandateUsage{Uses: len(ago)}
			for j, d := range ago {
				amount := float64(int(1) << j)
				require.NoError(t, db.Create(&models.MandateUse{ID: fmt.Sprintf("use_%d_%d", i, j), OrganizationID: org.ID, MandateID: m.ID,
					GateCheckID: fmt.Sprintf("chk_%d_%d", i, j), Amount: amount, CreatedAt: now.Add(-d)}).Error)
				if j <= i {
					u.WindowCount++
					u.WindowSum += amount
				}
			}
			want[m.ID] = u
		}
		same := func(t *testing.T, got []models.Mandate) {
			require.Len(t, got, len(want))
			for _, m := range got {
				w := want[m.ID]
				assert.Equal(t, []any{w.Uses, w.WindowCount, w.WindowSum}, []any{m.Usage.Uses, m.Usage.WindowCount, m.Usage.WindowSum}, m.BudgetWindow)
				one, err := s.GetMandate(ctx, org.ID, m.ID)
				require.NoError(t, err)
				assert.Equal(t, []any{w.Uses, w.WindowCount, w.WindowSum}, []any{one.Usage.Uses, one.Usage.WindowCount, one.Usage.WindowSum}, m.BudgetWindow)
			}
		}
		listed, _, err := s.ListMandates(ctx, org.ID, models.MandateFilter{}, models.Page{Limit: 50})
		require.NoError(t, err)
		same(t, listed)
		live, err := s.LiveMandates(ctx, org.ID, "refund.create")
		require.NoError(t, err)
		same(t, live)
	})
}
