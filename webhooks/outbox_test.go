package webhooks_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/webhooks"
)

// outboxEnv is an organisation whose events the outbox fans out.
type outboxEnv struct {
	t     *testing.T
	db    *gorm.DB
	store *models.Store
	org   *models.Organization
}

func newOutboxEnv(t *testing.T, db *gorm.DB) *outboxEnv {
	store := models.NewStore(db, testenv.Keys())
	return &outboxEnv{t: t, db: db, store: store, org: testenv.NewOrg(t, store)}
}

func (e *outboxEnv) endpoint(url string, kinds ...string) *models.WebhookEndpoint {
	ep, err := e.store.CreateWebhookEndpoint(context.Background(), e.org.ID, models.NewWebhookEndpoint{URL: url,
		Format: models.FormatJSON, Events: kinds, Enabled: true, Secret: "whsec_t"})
	require.NoError(e.t, err)
	return ep
}

func (e *outboxEnv) event(kind, subjectType, subjectID string) models.Event {
	ev := models.Event{ID: ids.New(ids.Event), OrganizationID: e.org.ID, Kind: kind, SubjectType: subjectType,
		SubjectID: subjectID, Data: models.RawJSON(`{}`), CreatedAt: time.Now()}
	require.NoError(e.t, e.db.Create(&ev).Error)
	return ev
}

// dispatch fans out what the outbox holds, returning the deliveries to
// start by target and endpoint.
func (e *outboxEnv) dispatch() map[string]models.Delivery {
	ds, err := webhooks.Outbox{Store: e.store.DeliveryStore}.Dispatch(context.Background(), 10)
	require.NoError(e.t, err)
	out := map[string]models.Delivery{}
	for _, d := range ds {
		assert.True(e.t, ids.Made(d.ID, ids.Delivery), d.ID)
		key := d.Target
		if d.EndpointID != nil {
			key += " " + *d.EndpointID
		}
		out[key] = d
	}
	return out
}

// An event reaches each endpoint subscribed to it and, when callbacks
// receive its kind, the callback of the request it is about; an endpoint switched off keeps its delivery as
// skipped, to be recovered, and the dispatcher does not start it; an
// event is fanned out once.
func TestOutboxDecidesWhoReceivesAnEvent(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		e := newOutboxEnv(t, db)
		ctx := context.Background()
		all := e.endpoint("https://all.example/hook")
		approved := e.endpoint("https://approved.example/hook", events.ApprovalApproved)
		off := e.endpoint("https://off.example/hook")
		require.NoError(t, db.Model(&models.WebhookEndpoint{}).Where("id = ?", off.ID).Update("switched_off_at", time.Now()).Error)
		callback := "https://agent.example/callback"
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: e.org.ID, Title: "Pay", CallbackURL: &callback,
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow, RequiredApprovals: 1}
		_, err := requests.Insert(ctx, e.store, approvals.Records(e.store), a, nil)
		require.NoError(t, err)

		requested := e.event(events.ApprovalRequested, "approval", a.ID)
		started := e.dispatch()
		assert.ElementsMatch(t, []string{"webhook " + all.ID}, keys(started),
			"requested: the endpoint of every event; not the one subscribed to approved only, nor the one switched off, nor the callback")
		var skipped models.Delivery
		require.NoError(t, db.Where("event_id = ? AND endpoint_id = ?", requested.ID, off.ID).Take(&skipped).Error)
		assert.Equal(t, models.DeliverySkipped, skipped.Status, "kept for a recovery")
		assert.Empty(t, e.dispatch(), "an event is fanned out once")

		e.event(events.ApprovalApproved, "approval", a.ID)
		assert.ElementsMatch(t, []string{"webhook " + all.ID, "webhook " + approved.ID, "callback"}, keys(e.dispatch()))

		// A request without a callback.
		b := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: e.org.ID, Title: "Ship",
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow, RequiredApprovals: 1}
		_, err = requests.Insert(ctx, e.store, approvals.Records(e.store), b, nil)
		require.NoError(t, err)
		e.event(events.ApprovalApproved, "approval", b.ID)
		assert.ElementsMatch(t, []string{"webhook " + all.ID, "webhook " + approved.ID}, keys(e.dispatch()))
	})
}

// A database restored from a backup taken after an event was recorded but
// before it was dispatched dispatches it again; its deliveries get the ids
// the first dispatch gave them (and receivers may already have acted on),
// one per target.
func TestAnEventDispatchedAgainKeepsItsDeliveryIDs(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		e := newOutboxEnv(t, db)
		e.endpoint("https://one.example/hook")
		e.endpoint("https://two.example/hook")
		ev := e.event(events.ApprovalRequested, "approval", "apr_x")

		ids := func(ds map[string]models.Delivery) []string {
			var out []string
			for _, d := range ds {
				out = append(out, d.ID)
			}
			return out
		}
		first := ids(e.dispatch())
		require.Len(t, first, 2, "one delivery per endpoint")
		assert.NotEqual(t, first[0], first[1])

		// What the restored database holds: the event, undispatched.
		require.NoError(t, db.Where("event_id = ?", ev.ID).Delete(&models.Delivery{}).Error)
		require.NoError(t, db.Model(&models.Event{}).Where("id = ?", ev.ID).Update("dispatched_at", nil).Error)
		assert.ElementsMatch(t, first, ids(e.dispatch()))
	})
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A delivery log narrowed to a state that is not one is refused, naming
// the field; each state a delivery can be in is taken.
func TestDeliveryLogTakesOnlyDeliveryStates(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		e := newOutboxEnv(t, db)
		svc := webhooks.New(e.store.DeliveryStore, nil, "http://assent.test")
		ep := e.endpoint("https://all.example/hook")
		ctx := context.Background()
		_, _, err := svc.Deliveries(ctx, e.org.ID, models.DeliveryFilter{EndpointID: ep.ID, Status: "lost"}, models.Page{Limit: 10})
		testenv.Refused(t, err, apperr.InvalidRequest, "status")
		for _, status := range append([]string{""}, models.DeliveryStatuses...) {
			_, _, err := svc.Deliveries(ctx, e.org.ID, models.DeliveryFilter{EndpointID: ep.ID, Status: status}, models.Page{Limit: 10})
			require.NoError(t, err, status)
		}
	})
}
