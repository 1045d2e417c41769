package requests_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// The record a claimed create makes is bound to its claim in the insert's
// transaction, so a retry after a crash finds that record instead of
// making a second one; a record taken back because its workflow never
// started frees the claim, and a record in a flow needs the flow open.
func TestInsertBindsTheRecordToItsClaim(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		newApproval := func() *approvals.Approval {
			return &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay",
				Requester: "key_a", RequestedBy: "agent", ExpiresAt: models.Now().Add(time.Hour)}, Risk: models.RiskLow, RequiredApprovals: 1,
			}
		}
		stored := func() int64 {
			var n int64
			require.NoError(t, db.Model(&approvals.Approval{}).Where("organization_id = ?", org.ID).Count(&n).Error)
			return n
		}
		claim := func() *models.Claim {
			return &models.Claim{OrganizationID: org.ID, PrincipalID: "key_a", Key: "create-1", RequestHash: "h"}
		}
		c := claim()
		_, err := idempotency.New(s).ClaimKey(ctx, c, true)
		require.NoError(t, err)
		first := newApproval()
		earlier, err := requests.Insert(ctx, s, approvals.Records(s), first, c)
		require.NoError(t, err)
		assert.Empty(t, earlier)
		assert.Equal(t, states.Pending, first.Status)

		// The process dies here, its lease lapses, and a retry takes the
		// key up. One that inserts anyway (it read the claim unbound
		// before the crash) writes nothing and is told the first record.
		require.NoError(t, db.Model(&models.IdempotencyKey{}).Where("idempotency_key = ?", "create-1").
			Update("locked_until", models.Now().Add(-time.Second)).Error)
		retry := claim()
		_, err = idempotency.New(s).ClaimKey(ctx, retry, true)
		require.NoError(t, err)
		require.True(t, retry.Resumed)
		id, err := s.ClaimedResource(ctx, retry)
		require.NoError(t, err)
		assert.Equal(t, first.ID, id)
		earlier, err = requests.Insert(ctx, s, approvals.Records(s), newApproval(), retry)
		require.NoError(t, err)
		assert.Equal(t, first.ID, earlier)
		assert.Equal(t, int64(1), stored())

		// A failed request does not free a claim that made a record...
		require.NoError(t, s.ReleaseIdempotencyKey(ctx, retry))
		id, err = s.ClaimedResource(ctx, retry)
		require.NoError(t, err)
		assert.Equal(t, first.ID, id)
		// ...until the record is taken back because its workflow never
		// started: the record, its row and whom it asks go, the claim is
		// free again.
		removed, err := requests.TakeBack(ctx, s, approvals.Records(s), org.ID, first.ID)
		require.NoError(t, err)
		assert.True(t, removed)
		id, err = s.ClaimedResource(ctx, retry)
		require.NoError(t, err)
		assert.Empty(t, id)
		assert.Equal(t, int64(0), stored())
		var rows int64
		require.NoError(t, db.Model(&models.Request{}).Where("id = ?", first.ID).Count(&rows).Error)
		assert.Zero(t, rows)

		// A record whose workflow started is not taken back, nor its claim
		// freed.
		started := newApproval()
		_, err = requests.Insert(ctx, s, approvals.Records(s), started, retry)
		require.NoError(t, err)
		testenv.Transition(t, s, approvals.Records(s), org.ID, started.ID, 1, func(*approvals.Approval) {})
		removed, err = requests.TakeBack(ctx, s, approvals.Records(s), org.ID, started.ID)
		require.NoError(t, err)
		assert.False(t, removed, "a record whose workflow began stays")
		id, err = s.ClaimedResource(ctx, retry)
		require.NoError(t, err)
		assert.Equal(t, started.ID, id)
		assert.Equal(t, int64(1), stored())

		// A request names an open flow of its own organisation, or none;
		// refused, it writes nothing and binds no claim.
		done := models.NewFlow(org.ID, "Done", nil, models.Actor{ID: "key_a"})
		done.Finish(models.FlowCompleted, models.Now())
		require.NoError(t, s.InsertFlow(ctx, done))
		other := testenv.NewOrg(t, s)
		elsewhere := models.NewFlow(other.ID, "Theirs", nil, models.Actor{ID: "key_b"})
		require.NoError(t, s.InsertFlow(ctx, elsewhere))
		for _, tc := range []struct {
			flow string
			code string
		}{{done.ID, apperr.InvalidState}, {elsewhere.ID, apperr.InvalidRequest}, {"flow_missing", apperr.InvalidRequest}} {
			fresh := &models.Claim{OrganizationID: org.ID, PrincipalID: "key_a", Key: "in-" + tc.flow, RequestHash: "h"}
			_, err := idempotency.New(s).ClaimKey(ctx, fresh, true)
			require.NoError(t, err)
			a := newApproval()
			a.FlowID = &tc.flow
			_, err = requests.Insert(ctx, s, approvals.Records(s), a, fresh)
			e, ok := apperr.As(err)
			require.True(t, ok, "flow %s: %v", tc.flow, err)
			assert.Equal(t, tc.code, e.Code, "flow %s", tc.flow)
			assert.Equal(t, "flowId", e.Field, "flow %s", tc.flow)
			id, err := s.ClaimedResource(ctx, fresh)
			require.NoError(t, err)
			assert.Empty(t, id, "flow %s", tc.flow)
		}
		assert.Equal(t, int64(1), stored())
	})
}
