package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// Events whose deliveries ended more than DeliveryRetention ago go, with
// their deliveries and attempts; a pending delivery, a recent event and
// one not dispatched yet keep theirs.
func TestPurgeDeliveriesKeepsWhatIsRecentOrPending(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		old := time.Now().Add(-models.DeliveryRetention - time.Hour)
		recent := time.Now().Add(-models.DeliveryRetention + time.Hour)
		event := func(dispatched *time.Time, statuses ...string) string {
			ev := models.Event{ID: ids.New(ids.Event), OrganizationID: org.ID, Kind: events.ApprovalRequested, SubjectType: "approval",
				SubjectID: "apr_x", Data: models.RawJSON(`{}`), CreatedAt: old, DispatchedAt: dispatched}
			require.NoError(t, db.Create(&ev).Error)
			for i, status := range statuses {
				target := []string{models.TargetCallback, models.TargetSlack}[i]
				d := models.Delivery{ID: ids.Derived(ids.Delivery, ev.ID, target), OrganizationID: org.ID, EventID: ev.ID, Target: target,
					Status: status, CreatedAt: old, UpdatedAt: old}
				require.NoError(t, db.Create(&d).Error)
				require.NoError(t, db.Create(&models.DeliveryAttempt{DeliveryID: d.ID, Attempt: 1, At: old, StatusCode: 200}).Error)
			}
			return ev.ID
		}
		gone := event(&old, models.DeliveryDelivered, models.DeliveryFailed)
		goneToo := event(&old, models.DeliverySkipped)
		pending := event(&old, models.DeliveryDelivered, models.DeliveryPending)
		fresh := event(&recent, models.DeliveryDelivered)
		undispatched := event(nil)

		n, err := s.PurgeDeliveries(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(2), n)
		var left []string
		require.NoError(t, db.Model(&models.Event{}).Order("id").Pluck("id", &left).Error)
		assert.ElementsMatch(t, []string{pending, fresh, undispatched}, left)
		for _, id := range []string{gone, goneToo} {
			var deliveries int64
			require.NoError(t, db.Model(&models.Delivery{}).Where("event_id = ?", id).Count(&deliveries).Error)
			assert.Zero(t, deliveries, "%s's deliveries", id)
		}
		var attempts int64
		require.NoError(t, db.Model(&models.DeliveryAttempt{}).Count(&attempts).Error)
		assert.Equal(t, int64(3), attempts, "the attempts of the pending event's two deliveries and the fresh one's")

		n, err = s.PurgeDeliveries(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "nothing more to purge")
	})
}
