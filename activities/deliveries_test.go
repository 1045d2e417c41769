package activities_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/activities"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/workflows"
)

// switchOffRig runs Delivery workflows in the test environment, with time
// skipping, against the real Deliver activity, a real database and a
// receiver on this machine that answers with the given statuses in turn
// (the last one repeats).
type switchOffRig struct {
	t     *testing.T
	store *models.Store
	acts  *activities.Activities
	ep    *models.WebhookEndpoint
	mu    sync.Mutex
	got   int
}

func newSwitchOffRig(t *testing.T, db *gorm.DB, answers ...int) *switchOffRig {
	r := &switchOffRig{t: t, store: models.NewStore(db, testenv.Keys())}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.mu.Lock()
		status := answers[min(r.got, len(answers)-1)]
		r.got++
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	org, err := r.store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	r.ep, err = r.store.CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: srv.URL, Format: models.FormatJSON,
		Enabled: true, Secret: "whsec_t"})
	require.NoError(t, err)
	r.acts = &activities.Activities{ActivityEnv: requests.ActivityEnv{Store: r.store}, HTTP: outbound.NewClient(netguard.DevLoopback)}
	return r
}

func (r *switchOffRig) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// deliver queues one event for the endpoint and runs its delivery to the
// end, returning the delivery as stored.
func (r *switchOffRig) deliver() models.Delivery {
	ctx := context.Background()
	ev := models.Event{ID: "evt_" + time.Now().Format("150405.000000000"), OrganizationID: r.ep.OrganizationID,
		Kind: events.ApprovalRequested, SubjectType: "approval", SubjectID: "apr_x", Data: models.RawJSON(`{}`), CreatedAt: time.Now()}
	require.NoError(r.t, r.store.DB().Create(&ev).Error)
	ds, err := webhooks.Outbox{Store: r.store.DeliveryStore}.Dispatch(ctx, 10)
	require.NoError(r.t, err)
	var id string
	if len(ds) == 1 {
		id = ds[0].ID
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(workflows.Delivery)
		env.RegisterActivityWithOptions(r.acts.Deliver, activity.RegisterOptions{Name: workflows.ActivityDeliver})
		env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{DeliveryID: id, FirstAttempt: 1})
		require.True(r.t, env.IsWorkflowCompleted())
	} else {
		require.NoError(r.t, r.store.DB().Model(&models.Delivery{}).Where("event_id = ?", ev.ID).Pluck("id", &id).Error)
	}
	var d models.Delivery
	require.NoError(r.t, r.store.DB().Where("id = ?", id).Take(&d).Error)
	return d
}

func (r *switchOffRig) endpoint() models.WebhookEndpoint {
	var ep models.WebhookEndpoint
	require.NoError(r.t, r.store.DB().Where("id = ?", r.ep.ID).Take(&ep).Error)
	return ep
}

// TestEndpointSwitchesOffAtExactlyTwentyFailedAttempts counts attempts,
// not deliveries: four deliveries of five retried attempts each.
func TestEndpointSwitchesOffAtExactlyTwentyFailedAttempts(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		r := newSwitchOffRig(t, db, 503)
		for i := 1; i <= 3; i++ {
			d := r.deliver()
			assert.Equal(t, models.DeliveryFailed, d.Status)
			assert.Equal(t, workflows.DeliveryAttempts, d.Attempts)
			ep := r.endpoint()
			assert.Equal(t, 5*i, ep.ConsecutiveFailures)
			assert.Nil(t, ep.SwitchedOffAt, "still on after %d failures", 5*i)
		}
		r.deliver()
		ep := r.endpoint()
		assert.Equal(t, models.SwitchOffAfter, ep.ConsecutiveFailures)
		require.NotNil(t, ep.SwitchedOffAt, "switched off at the 20th failure")
		assert.Contains(t, ep.LastError, "503")

		d := r.deliver()
		assert.Equal(t, models.DeliverySkipped, d.Status, "kept for recover")
		assert.Equal(t, models.SwitchOffAfter, r.requests(), "nothing is sent to a switched-off endpoint")
	})
}

// TestSuccessResetsTheFailureCount: nineteen failures, then a success.
func TestSuccessResetsTheFailureCount(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		answers := make([]int, 20)
		for i := range 19 {
			answers[i] = 500
		}
		answers[19] = 204
		r := newSwitchOffRig(t, db, answers...)
		for range 3 {
			r.deliver()
		}
		d := r.deliver()
		assert.Equal(t, models.DeliveryDelivered, d.Status)
		assert.Equal(t, 5, d.Attempts)
		ep := r.endpoint()
		assert.Zero(t, ep.ConsecutiveFailures)
		assert.Nil(t, ep.SwitchedOffAt)
	})
}

// TestAttemptCutOffByACrashStillCounts: an attempt that reached the
// receiver but whose outcome a crash kept from being recorded is counted,
// so the next one carries Assent-Attempt 2, not 1 again.
func TestAttemptCutOffByACrashStillCounts(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		var mu sync.Mutex
		var seen []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get(events.HeaderAttempt))
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		defer srv.Close()
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		org, err := store.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		_, err = store.CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: srv.URL, Format: models.FormatJSON,
			Enabled: true, Secret: "whsec_t"})
		require.NoError(t, err)
		ev := models.Event{ID: "evt_crash", OrganizationID: org.ID, Kind: events.ApprovalRequested, SubjectType: "approval",
			SubjectID: "apr_x", Data: models.RawJSON(`{}`), CreatedAt: time.Now()}
		require.NoError(t, store.DB().Create(&ev).Error)
		ds, err := webhooks.Outbox{Store: store.DeliveryStore}.Dispatch(ctx, 10)
		require.NoError(t, err)
		require.Len(t, ds, 1)

		acts := &activities.Activities{ActivityEnv: requests.ActivityEnv{Store: store}, HTTP: outbound.NewClient(netguard.DevLoopback)}
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflow(workflows.Delivery)
		env.RegisterActivityWithOptions(func(ctx context.Context, id string, first int) error {
			if activity.GetInfo(ctx).Attempt == 1 {
				// The first attempt is sent, then its worker dies.
				mu.Lock()
				seen = append(seen, "1")
				mu.Unlock()
				return temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
			}
			return acts.Deliver(ctx, id, first)
		}, activity.RegisterOptions{Name: workflows.ActivityDeliver})
		env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{DeliveryID: ds[0].ID, FirstAttempt: ds[0].Attempts + 1})
		require.True(t, env.IsWorkflowCompleted())
		require.NoError(t, env.GetWorkflowError())
		assert.Equal(t, []string{"1", "2"}, seen)
		var d models.Delivery
		require.NoError(t, store.DB().Where("id = ?", ds[0].ID).Take(&d).Error)
		assert.Equal(t, 2, d.Attempts)
	})
}

// Each attempt is counted by outcome and number once recorded, a first
// success is timed from its event, and the endpoint switched off is
// counted once.
func TestDeliveryMetrics(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		r := newSwitchOffRig(t, db, 503, 200, 503)
		m := metrics.New()
		r.store.SetMetrics(m)
		assert.Equal(t, models.DeliveryDelivered, r.deliver().Status)
		for range 4 {
			assert.Equal(t, models.DeliveryFailed, r.deliver().Status)
		}
		require.NotNil(t, r.endpoint().SwitchedOffAt)
		r.deliver() // skipped: no attempt

		got := map[string]float64{}
		families, err := m.Registry().Gather()
		require.NoError(t, err)
		for _, f := range families {
			for _, s := range f.GetMetric() {
				key := f.GetName()
				for _, l := range s.GetLabel() {
					key += " " + l.GetName() + "=" + l.GetValue()
				}
				got[key] = s.GetCounter().GetValue() + float64(s.GetHistogram().GetSampleCount())
			}
		}
		assert.Equal(t, 5.0, got["assent_delivery_attempts_total attempt=1 outcome=retrying"])
		assert.Equal(t, 1.0, got["assent_delivery_attempts_total attempt=2 outcome=delivered"])
		assert.Equal(t, 4.0, got["assent_delivery_attempts_total attempt=2 outcome=retrying"])
		assert.Equal(t, 4.0, got["assent_delivery_attempts_total attempt=4 outcome=retrying"])
		assert.Equal(t, 4.0, got["assent_delivery_attempts_total attempt=5 outcome=failed"])
		assert.Zero(t, got["assent_delivery_attempts_total attempt=5 outcome=retrying"])
		assert.Equal(t, 1.0, got["assent_delivery_first_success_seconds target=webhook"], "one first success, timed")
		assert.Equal(t, 1.0, got["assent_webhook_endpoints_switched_off_total"])
	})
}
