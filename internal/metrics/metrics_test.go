package metrics

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A nil *Metrics counts nothing and serves an empty exposition, so code
// built without metrics runs unchanged.
func TestNilCountsNothing(t *testing.T) {
	var m *Metrics
	m.HTTPRequest("/x", "GET", 200, time.Second)
	m.RequestCreated("approval")
	m.RequestSettled("approval", "approved", "high", time.Minute, true)
	m.DeliveryAttempt(Delivered, 1)
	m.FirstDelivered("webhook", time.Second)
	m.EndpointSwitchedOff()
	m.ReportVersion("live")
	m.Scanned(time.Millisecond)
	m.GateChecked("allowed")
	m.LongPolls(func() int { return 1 })
	m.ReadDatabase(time.Second, nil)
	assert.Nil(t, m.Temporal(nil))
	assert.NoError(t, m.Close())
	rec := httptest.NewRecorder()
	m.Handler("").ServeHTTP(rec, httptest.NewRequest("GET", Path, nil))
	assert.Equal(t, 200, rec.Code)
	assert.Empty(t, strings.TrimSpace(rec.Body.String()))
}

// Labels take bounded values: an unmatched route is one value, an unknown
// method "other", attempts past the fifth "more"; risk "" is "none".
func TestLabelsAreBounded(t *testing.T) {
	m := New()
	m.HTTPRequest("", "GET", 404, time.Millisecond)
	m.HTTPRequest("", "GET", 404, time.Millisecond)
	m.HTTPRequest("/api/v1/approvals/:id", "BREW", 405, time.Millisecond)
	assert.Equal(t, 2.0, testutil.ToFloat64(m.httpRequests.WithLabelValues(UnmatchedRoute, "GET", "404")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.httpRequests.WithLabelValues("/api/v1/approvals/:id", "other", "405")))

	for _, n := range []int{1, 5, 6, 40, 0} {
		m.DeliveryAttempt(Retrying, n)
	}
	assert.Equal(t, 1.0, testutil.ToFloat64(m.deliveryAttempts.WithLabelValues(Retrying, "1")))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.deliveryAttempts.WithLabelValues(Retrying, "5")))
	assert.Equal(t, 3.0, testutil.ToFloat64(m.deliveryAttempts.WithLabelValues(Retrying, "more")))

	m.RequestSettled("review", "approved", "", time.Hour, true)
	m.RequestSettled("approval", "expired", "high", time.Hour, false)
	assert.Equal(t, 1, testutil.CollectAndCount(m.decisionTime), "only decisions are timed")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.requestsSettled.WithLabelValues("approval", "expired")))
	assert.Contains(t, gathered(t, m), `assent_request_decision_seconds_count{kind="review",risk="none"} 1`)
}

// The database is read when scraped, at most once per interval; a failed
// reading leaves the gauges out and is counted.
func TestDatabaseReadingsAreCached(t *testing.T) {
	m := New()
	assert.NotContains(t, gathered(t, m), "assent_requests_open", "no reader, no gauges")

	var reads atomic.Int32
	fail := atomic.Bool{}
	m.ReadDatabase(time.Hour, func(context.Context) (Readings, error) {
		reads.Add(1)
		if fail.Load() {
			return Readings{}, errors.New("down")
		}
		return Readings{Open: map[string]int{"approval": 3, "review": 0}, Overdue: map[string]int{"approval": 1},
			OutboxLag: 90 * time.Second}, nil
	})
	out := gathered(t, m)
	assert.Contains(t, out, `assent_requests_open{kind="approval"} 3`)
	assert.Contains(t, out, `assent_requests_open{kind="review"} 0`)
	assert.Contains(t, out, `assent_requests_overdue{kind="approval"} 1`)
	assert.Contains(t, out, "assent_outbox_lag_seconds 90")
	gathered(t, m)
	gathered(t, m)
	assert.Equal(t, int32(1), reads.Load(), "scrapes within the interval reuse the reading")

	fail.Store(true)
	m.ReadDatabase(0, m.database.read)
	out = gathered(t, m)
	assert.NotContains(t, out, "assent_requests_open{")
	assert.Contains(t, out, "assent_database_readings_failed_total 1")
}

func TestLongPollsGauge(t *testing.T) {
	m := New()
	assert.Contains(t, gathered(t, m), "assent_long_polls_open 0")
	m.LongPolls(func() int { return 7 })
	assert.Contains(t, gathered(t, m), "assent_long_polls_open 7")
}

// The registry is the process's own, with the Go and process collectors;
// the Temporal SDK's handler is one per process.
func TestRegistry(t *testing.T) {
	m := New()
	out := gathered(t, m)
	assert.Contains(t, out, "go_goroutines")
	assert.Contains(t, out, "process_start_time_seconds")
	assert.Contains(t, out, "# HELP assent_webhook_endpoints_switched_off_total")
	h := m.Temporal(nil)
	require.NotNil(t, h)
	h.Counter("temporal_test_counter").Inc(2)
	h2 := m.Temporal(nil)
	h2.Counter("temporal_test_counter").Inc(1)
	require.NoError(t, m.Close(), "closing reports what is left")
	assert.Contains(t, gathered(t, m), "temporal_test_counter_total 3")
	assert.NotSame(t, m.Registry(), New().Registry())
}

func gathered(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler("").ServeHTTP(rec, httptest.NewRequest("GET", Path, nil))
	require.Equal(t, 200, rec.Code)
	return rec.Body.String()
}

// Every process says its build: assent_build_info is 1, labelled.
func TestBuildInfo(t *testing.T) {
	assert.Regexp(t, `(?m)^assent_build_info\{commit="",goversion="go1\.[^"]+",version="\(devel\)"\} 1$`, gathered(t, New()))
}
