package metrics

import (
	"time"

	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// temporalFlush is how often the SDK's counts reach the registry.
const temporalFlush = time.Second

// temporalBuckets are the SDK's timers' buckets, in seconds: a poll is a
// long request of up to a minute or so.
var temporalBuckets = []float64{.001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5, 10, 30, 60, 120}

// Temporal is the handler for client.Options.MetricsHandler: the SDK's
// client and worker metrics (temporal_request_total,
// temporal_long_request_total, temporal_num_pollers, …) go into this
// registry through tally's Prometheus reporter, the SDK's documented path
// (go.temporal.io/sdk/contrib/tally). onError hears of a metric the
// reporter could not register (nil ignores it). Every client of the
// process shares one handler. Nil for nil, which the SDK takes as none.
func (m *Metrics) Temporal(onError func(error)) client.MetricsHandler {
	if m == nil {
		return nil
	}
	m.temporalOnce.Do(func() {
		if onError == nil {
			onError = func(error) {}
		}
		reporter := tallyprom.NewReporter(tallyprom.Options{Registerer: m.reg, DefaultTimerType: tallyprom.HistogramTimerType,
			DefaultHistogramBuckets: temporalBuckets, OnRegisterError: onError})
		scope, closer := tally.NewRootScope(tally.ScopeOptions{CachedReporter: reporter, Separator: tallyprom.DefaultSeparator,
			SanitizeOptions: &sdktally.PrometheusSanitizeOptions}, temporalFlush)
		m.temporalScope, m.temporalClose = sdktally.NewPrometheusNamingScope(scope), closer.Close
	})
	return sdktally.NewMetricsHandler(m.temporalScope)
}

// Close reports the SDK's last counts and stops reporting them.
func (m *Metrics) Close() error {
	if m == nil || m.temporalClose == nil {
		return nil
	}
	return m.temporalClose()
}
