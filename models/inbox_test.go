package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func TestPendingForPutsTheMostUrgentFirstWhateverTheBacklog(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := newOrg(t, s)
		ada, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		bob, err := s.CreateMember(ctx, org.ID, "bob@example.com", "", "")
		require.NoError(t, err)
		now := time.Now().UTC().Truncate(time.Second)
		create := func(title, risk string, expires time.Time, status string, orgID string, approvers ...string) *models.Approval {
			a := &models.Approval{OrganizationID: orgID, Title: title, Risk: risk, ApproverIDs: approvers,
				ExpiresAt: expires, RequiredApprovals: 1, Requester: "key_test", RequestedBy: "agent"}
			_, err := s.Approvals().Create(ctx, a, nil)
			require.NoError(t, err)
			require.NoError(t, db.Model(a).Update("status", status).Error)
			return a
		}

		// The most urgent are the oldest: a list read newest first and cut
		// short would miss them.
		urgentLow := create("urgent low", models.RiskLow, now.Add(time.Hour), states.Pending, org.ID, ada.ID)
		urgentCritical := create("urgent critical", models.RiskCritical, now.Add(time.Hour), states.Pending, org.ID, ada.ID, bob.ID)
		for i := range 5 {
			create("later", models.RiskMedium, now.Add(time.Duration(48+i)*time.Hour), states.Pending, org.ID, ada.ID)
		}
		soonHigh := create("soon high", models.RiskHigh, now.Add(3*time.Hour), states.Pending, org.ID, ada.ID)
		// Not Ada's to decide, not pending, or another organisation's.
		create("bob's", models.RiskCritical, now.Add(time.Minute), states.Pending, org.ID, bob.ID)
		create("decided", models.RiskCritical, now.Add(time.Minute), "approved", org.ID, ada.ID)
		other := newOrg(t, s)
		create("elsewhere", models.RiskCritical, now.Add(time.Minute), states.Pending, other.ID, ada.ID)

		in, err := s.PendingFor(ctx, org.ID, ada.ID, now.Add(24*time.Hour), 3)
		require.NoError(t, err)
		require.Len(t, in.Items, 3)
		assert.Equal(t, []string{urgentCritical.ID, urgentLow.ID, soonHigh.ID},
			[]string{in.Items[0].ID, in.Items[1].ID, in.Items[2].ID}, "earliest expiry first, then the highest risk")
		assert.Equal(t, 8, in.Total, "counts cover what is not listed")
		assert.Equal(t, map[string]int{models.RiskCritical: 1, models.RiskHigh: 1, models.RiskMedium: 5, models.RiskLow: 1}, in.ByRisk)
		assert.Equal(t, 3, in.DueBefore)

		in, err = s.PendingFor(ctx, org.ID, bob.ID, now.Add(24*time.Hour), 10)
		require.NoError(t, err)
		assert.Equal(t, 2, in.Total)
		assert.Equal(t, "bob's", in.Items[0].Title)

		in, err = s.PendingFor(ctx, other.ID, bob.ID, now.Add(24*time.Hour), 10)
		require.NoError(t, err)
		assert.Zero(t, in.Total)
		assert.Empty(t, in.Items)
	})
}
