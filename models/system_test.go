package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestSystemFigures: open requests by kind, past expiry and oldest, per
// organisation and for the instance; the oldest waiting first; the
// outbox's lag.
func TestSystemFigures(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		approval := func(orgID, title, status string, created time.Time, expires time.Duration) *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: orgID, Title: title,
				ExpiresAt: created.Add(expires), Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			require.NoError(t, db.Model(a).Updates(map[string]any{"status": status, "created_at": created}).Error)
			return a
		}
		now := models.Now()
		stuck := approval(org.ID, "Stuck", states.Pending, now.Add(-48*time.Hour), time.Hour)
		waiting := approval(org.ID, "Waiting", states.Pending, now.Add(-time.Hour), 24*time.Hour)
		approval(org.ID, "Done", states.Approved, now.Add(-72*time.Hour), time.Hour)
		theirs := approval(other.ID, "Theirs", states.Pending, now.Add(-96*time.Hour), time.Hour)

		counts, err := s.OpenRequests(ctx, org.ID)
		require.NoError(t, err)
		require.Len(t, counts, 3, "every kind, waiting or not")
		assert.Equal(t, "approval", counts[0].Kind)
		assert.EqualValues(t, 2, counts[0].Open)
		assert.EqualValues(t, 1, counts[0].Overdue)
		require.NotNil(t, counts[0].Oldest)
		assert.WithinDuration(t, stuck.CreatedAt, *counts[0].Oldest, time.Second)
		assert.Equal(t, models.OpenCount{Kind: "collection"}, counts[1])
		assert.Equal(t, models.OpenCount{Kind: "review"}, counts[2])

		all, err := s.OpenRequests(ctx, models.AllOrganizations)
		require.NoError(t, err)
		assert.EqualValues(t, 3, all[0].Open, "the instance counts every organisation")
		assert.WithinDuration(t, theirs.CreatedAt, *all[0].Oldest, time.Second)

		oldest, err := s.OldestOpen(ctx, org.ID, 5)
		require.NoError(t, err)
		require.Len(t, oldest, 2, "another organisation's request is not listed")
		assert.Equal(t, []string{stuck.ID, waiting.ID}, []string{oldest[0].ID, oldest[1].ID})
		assert.Equal(t, "Stuck", oldest[0].Title)

		lag, err := s.OutboxLag(ctx)
		require.NoError(t, err)
		var undispatched int64
		require.NoError(t, db.Model(&models.Event{}).Where("dispatched_at IS NULL").Count(&undispatched).Error)
		if undispatched == 0 {
			assert.Zero(t, lag)
		}
		require.NoError(t, db.Create(&models.Event{ID: "evt_lag", OrganizationID: org.ID, Kind: "approval.created", SubjectType: "approval",
			SubjectID: waiting.ID, Data: models.RawJSON("{}"), CreatedAt: now.Add(-90 * time.Second)}).Error)
		lag, err = s.OutboxLag(ctx)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, lag, 90*time.Second)
	})
}
