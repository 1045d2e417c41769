package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// The readings count every organisation's open requests by kind, those a
// minute past their expiry, and the outbox's oldest undispatched event.
func TestReadings(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		r, err := s.Readings(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"approval": 0, "collection": 0, "review": 0}, r.Open, "every kind, zero too")
		assert.Zero(t, r.OutboxLag)

		approval := func(orgID string, expires time.Time) *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: orgID, Title: "Pay", ExpiresAt: expires.UTC(),
				Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			return a
		}
		approval(org.ID, time.Now().Add(time.Hour))
		approval(other.ID, time.Now().Add(-2*time.Minute))
		approval(org.ID, time.Now().Add(-10*time.Second)) // within the grace
		settled := approval(org.ID, time.Now().Add(-time.Hour))
		require.NoError(t, db.Model(settled).Update("status", states.Expired).Error)
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "c", ExpiresAt: time.Now().Add(time.Hour).UTC(),
			Requester: "key_test", RequestedBy: "agent"}, RequiredResponses: 1,
		}
		_, err = requests.Insert(ctx, s, collections.Records(s), c, nil)
		require.NoError(t, err)
		old := models.Now().Add(-90 * time.Second)
		for i, at := range []time.Time{old, models.Now()} {
			require.NoError(t, db.Create(&models.Event{ID: []string{"evt_01", "evt_02"}[i], OrganizationID: org.ID, Kind: "approval.requested",
				SubjectType: "approval", SubjectID: "apr_x", Data: models.RawJSON(`{}`), CreatedAt: at}).Error)
		}
		now := models.Now()
		require.NoError(t, db.Create(&models.Event{ID: "evt_00", OrganizationID: org.ID, Kind: "approval.requested",
			SubjectType: "approval", SubjectID: "apr_x", Data: models.RawJSON(`{}`), CreatedAt: old.Add(-time.Hour), DispatchedAt: &now}).Error)

		r, err = s.Readings(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"approval": 3, "collection": 1, "review": 0}, r.Open)
		assert.Equal(t, map[string]int{"approval": 1, "collection": 0, "review": 0}, r.Overdue)
		assert.InDelta(t, 90, r.OutboxLag.Seconds(), 5, "the oldest undispatched event; dispatched ones do not count")
	})
}

// A request is counted once when its workflow writes its first transition
// (not when its record is written: a record whose workflow never starts is
// taken back) and once when a transition settles it, never for a retried
// transition or one that leaves it open; only decisions are timed.
func TestRequestsAreCountedOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		m := metrics.New()
		s.SetMetrics(m)
		org := testenv.NewOrg(t, s)
		create := func() *approvals.Approval {
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay", ExpiresAt: time.Now().Add(time.Hour).UTC(),
				Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskHigh,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
			require.NoError(t, err)
			return a
		}
		a, b := create(), create()
		apply := func(id string, seq int, status string) {
			_, err := requests.Persist(ctx, s, approvals.Records(s), requests.Change[approvals.Approval]{OrganizationID: org.ID, ID: id, Seq: seq,
				Apply: func(a *approvals.Approval) (models.AuditEntry, error) {
					a.Status = status
					return models.AuditEntry{Action: status, ActorID: "key_test", ActorName: "agent", At: models.Now()}, nil
				}})
			require.NoError(t, err)
		}
		apply(a.ID, 1, states.Pending) // created: still open
		apply(a.ID, 2, states.Approved)
		apply(a.ID, 2, states.Approved) // a retry: skipped
		apply(b.ID, 1, states.Expired)

		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "c", ExpiresAt: time.Now().Add(time.Hour).UTC(),
			Requester: "key_test", RequestedBy: "agent"}, RequiredResponses: 1,
		}
		_, err := requests.Insert(ctx, s, collections.Records(s), c, nil)
		require.NoError(t, err)
		_, err = requests.Persist(ctx, s, collections.Records(s), requests.Change[collections.Collection]{OrganizationID: org.ID, ID: c.ID, Seq: 1,
			Apply: func(*collections.Collection) (models.AuditEntry, error) {
				return models.AuditEntry{Action: "created", ActorID: "key_test", ActorName: "agent", At: models.Now()}, nil
			}})
		require.NoError(t, err)
		// Written, then taken back: its workflow never started.
		gone := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "gone", ExpiresAt: time.Now().Add(time.Hour).UTC(),
			Requester: "key_test", RequestedBy: "agent"}, RequiredResponses: 1,
		}
		_, err = requests.Insert(ctx, s, collections.Records(s), gone, nil)
		require.NoError(t, err)
		_, err = requests.TakeBack(ctx, s, collections.Records(s), org.ID, gone.ID)
		require.NoError(t, err)

		out, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, "assent_requests_created_total", "assent_requests_settled_total",
			"assent_request_decision_seconds")
		require.NoError(t, err)
		text := string(out)
		assert.Contains(t, text, `assent_requests_created_total{kind="approval"} 2`)
		assert.Contains(t, text, `assent_requests_created_total{kind="collection"} 1`)
		assert.Contains(t, text, `assent_requests_settled_total{kind="approval",outcome="approved"} 1`)
		assert.Contains(t, text, `assent_requests_settled_total{kind="approval",outcome="expired"} 1`)
		assert.Contains(t, text, `assent_request_decision_seconds_count{kind="approval",risk="high"} 1`, "the expiry is not a decision")
	})
}
