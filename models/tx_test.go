package models_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestTxCarriesOneTransaction: what a service writes in Tx commits
// together or not at all, a Tx inside one joins it, the writes that need a
// transaction refuse to run outside one, and the dispatcher hears of an
// event only once its transaction commits.
func TestTxCarriesOneTransaction(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		by := models.Actor{ID: "key_1", Name: "agent"}
		count := func(table string) (n int64) {
			require.NoError(t, db.Table(table).Where("organization_id = ?", org.ID).Count(&n).Error)
			return n
		}
		heard := func() bool {
			select {
			case <-s.Changes().EventsWritten():
				return true
			default:
				return false
			}
		}

		failed := errors.New("the use case refused")
		err := s.Tx(ctx, func(ctx context.Context) error {
			f := models.NewFlow(org.ID, "rolled back", nil, by)
			require.NoError(t, s.InsertFlow(ctx, f))
			require.NoError(t, s.Audit(ctx, models.FlowAudit(f, 1, "created", by, f.CreatedAt)))
			return s.Tx(ctx, func(ctx context.Context) error {
				require.NoError(t, s.Emit(ctx, &models.Event{OrganizationID: org.ID, Kind: "flow.completed",
					SubjectType: "flow", SubjectID: f.ID, Data: models.RawJSON(`{}`), CreatedAt: models.Now()}))
				return failed
			})
		})
		require.ErrorIs(t, err, failed)
		assert.Zero(t, count("flows"), "the flow, its audit entry and its event go back together")
		assert.Zero(t, count("audit_entries"))
		assert.Zero(t, count("events"))
		assert.False(t, heard(), "nothing committed, nothing to dispatch")

		f, err := createFlow(ctx, s, org.ID, "kept", by)
		require.NoError(t, err)
		assert.False(t, heard(), "no event written")
		require.NoError(t, completeFlow(ctx, s, org.ID, f.ID, by))
		assert.True(t, heard(), "the dispatcher hears of the committed event")
		assert.EqualValues(t, 1, count("flows"))
		assert.EqualValues(t, 2, count("audit_entries"))
		assert.EqualValues(t, 1, count("events"))
		require.NoError(t, s.VerifyAuditChain(ctx, org.ID))

		_, err = s.LockFlow(ctx, org.ID, f.ID)
		assert.True(t, apperr.Is(err, apperr.Internal), "a lock outside a transaction: %v", err)
		assert.True(t, apperr.Is(s.Audit(ctx, models.FlowAudit(f, 3, "x", by, models.Now())), apperr.Internal))
		assert.True(t, apperr.Is(s.Emit(ctx, &models.Event{OrganizationID: org.ID}), apperr.Internal))
		assert.EqualValues(t, 2, count("audit_entries"), "nothing written outside one")
	})
}
