// Package metrics is the process's Prometheus metrics: one private
// registry (never the global default) with the Go and process collectors,
// Assent's own metrics, the readings taken from the database at a bounded
// rate, and the Temporal SDK's client and worker metrics (temporal.go).
//
// The domain packages count through the methods here, never through
// prometheus; every method is safe on a nil *Metrics, which counts nothing,
// so code and tests built without metrics work unchanged. Every label takes
// its values from a fixed set: route templates, not paths; kinds, states
// and outcomes, not ids.
package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"

	"github.com/assent-hq/assent/internal/buildinfo"
)

// Path is where every process serves its metrics.
const Path = "/metrics"

// UnmatchedRoute is the route label of a request no route matched, so an
// unknown path never becomes a label value of its own.
const UnmatchedRoute = "unmatched"

// Metrics is one process's metrics. Build it once per process with New.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	requestsCreated *prometheus.CounterVec
	requestsSettled *prometheus.CounterVec
	decisionTime    *prometheus.HistogramVec

	deliveryAttempts *prometheus.CounterVec
	firstDelivered   *prometheus.HistogramVec
	switchedOff      prometheus.Counter

	reportVersions *prometheus.CounterVec
	scanDuration   prometheus.Histogram

	gateChecks *prometheus.CounterVec

	longPolls atomic.Pointer[func() int]
	database  *databaseCollector

	temporalOnce  sync.Once
	temporalScope tally.Scope
	temporalClose func() error
}

// New returns a process's metrics, every family registered.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.httpRequests = m.counterVec("assent_http_requests_total",
		"HTTP requests answered by the API and the pages, by route template (\"unmatched\" when none matched), method and status.",
		"route", "method", "status")
	m.httpDuration = m.histogramVec("assent_http_request_duration_seconds",
		"Time to answer an HTTP request of the API or the pages, long-polls included, by route template and method.",
		[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}, "route", "method")

	m.requestsCreated = m.counterVec("assent_requests_created_total",
		"Requests created, by kind (approval, collection, review), counted by the process whose workflow step first wrote one.", "kind")
	m.requestsSettled = m.counterVec("assent_requests_settled_total",
		"Requests settled, by kind and the state they settled in (approved, rejected, changes_requested, complete, expired, cancelled).",
		"kind", "outcome")
	m.decisionTime = m.histogramVec("assent_request_decision_seconds",
		"Time from a request's creation to its decision (approved, rejected, changes_requested, complete; not expired or cancelled), by kind and risk (\"none\" for kinds without one).",
		[]float64{10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400}, "kind", "risk")

	m.deliveryAttempts = m.counterVec("assent_delivery_attempts_total",
		"Delivery attempts by outcome (delivered; failed with another attempt to come, retrying; failed for good, failed) and attempt number (1 to 5, then \"more\").",
		"outcome", "attempt")
	m.firstDelivered = m.histogramVec("assent_delivery_first_success_seconds",
		"Time from an outbox event to the first successful delivery of it to a receiver, by target (webhook, callback, slack).",
		[]float64{.1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600}, "target")
	m.switchedOff = m.counter("assent_webhook_endpoints_switched_off_total",
		"Webhook endpoints switched off after too many consecutive failed deliveries.")

	m.reportVersions = m.counterVec("assent_report_versions_total",
		"Report versions written, by what the publish scan made of them (live, held, declined).", "outcome")
	m.scanDuration = m.histogram("assent_publish_scan_seconds",
		"Time the publish scan took over one version's files.",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60})

	m.gateChecks = m.counterVec("assent_gate_checks_total",
		"Action gate checks by outcome (allowed, denied, approval_required).", "outcome")

	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "assent_long_polls_open",
		Help: "Long-polls (GET …?wait=) this process holds open."}, func() float64 {
		if f := m.longPolls.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	}))
	m.database = newDatabaseCollector()
	m.reg.MustRegister(m.database)

	b := buildinfo.Get()
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "assent_build_info",
		Help:        "Always 1; its labels name the build: version, commit and the Go release.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.GoVersion}},
		func() float64 { return 1 }))
	return m
}

func (m *Metrics) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.reg.MustRegister(c)
	return c
}

func (m *Metrics) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	m.reg.MustRegister(h)
	return h
}

func (m *Metrics) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(h)
	return h
}

// Registry is the process's registry, for tests that gather from it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in Prometheus's text format; nil serves an
// empty exposition. A metric that cannot be gathered is left out (and
// counted in promhttp_metric_handler_errors_total), not the whole scrape.
// With token set, only a request bearing it (Authorization: Bearer
// <token>) is served, any other answered 401: the metrics count every
// organisation's requests.
func (m *Metrics) Handler(token string) http.Handler {
	h := promhttp.HandlerFor(prometheus.NewRegistry(), promhttp.HandlerOpts{})
	if m != nil {
		h = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
	}
	if token == "" {
		return h
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(got))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "/metrics needs Authorization: Bearer <ASSENT_METRICS_TOKEN>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// methods are the label values of HTTP methods; any other is "other".
var methods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true}

// HTTPRequest counts one answered request. route is the matched route's
// template ("" when none matched).
func (m *Metrics) HTTPRequest(route, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = UnmatchedRoute
	}
	if !methods[method] {
		method = "other"
	}
	m.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.httpDuration.WithLabelValues(route, method).Observe(took.Seconds())
}

// RequestCreated counts a request of kind written.
func (m *Metrics) RequestCreated(kind string) {
	if m == nil {
		return
	}
	m.requestsCreated.WithLabelValues(kind).Inc()
}

// RequestSettled counts a request of kind settled in outcome after took
// since its creation; decided says a person or the rules decided it (not
// an expiry or a cancellation), which the decision time observes. risk ""
// is a kind without one.
func (m *Metrics) RequestSettled(kind, outcome, risk string, took time.Duration, decided bool) {
	if m == nil {
		return
	}
	m.requestsSettled.WithLabelValues(kind, outcome).Inc()
	if !decided {
		return
	}
	if risk == "" {
		risk = "none"
	}
	m.decisionTime.WithLabelValues(kind, risk).Observe(took.Seconds())
}

// Delivery attempt outcomes.
const (
	Delivered = "delivered"
	Retrying  = "retrying"
	Failed    = "failed"
)

// attemptLabel bounds the attempt number: a delivery gets five attempts a
// send, and an administrator's resends number on.
func attemptLabel(n int) string {
	if n >= 1 && n <= 5 {
		return strconv.Itoa(n)
	}
	return "more"
}

// DeliveryAttempt counts attempt number n of a delivery, by outcome
// (Delivered, Retrying, Failed).
func (m *Metrics) DeliveryAttempt(outcome string, n int) {
	if m == nil {
		return
	}
	m.deliveryAttempts.WithLabelValues(outcome, attemptLabel(n)).Inc()
}

// FirstDelivered observes a delivery to target's first success, took after
// its event.
func (m *Metrics) FirstDelivered(target string, took time.Duration) {
	if m == nil {
		return
	}
	m.firstDelivered.WithLabelValues(target).Observe(max(took, 0).Seconds())
}

// EndpointSwitchedOff counts a webhook endpoint switched off.
func (m *Metrics) EndpointSwitchedOff() {
	if m == nil {
		return
	}
	m.switchedOff.Inc()
}

// ReportVersion counts a report version written, by what the scan made of
// it: "live", "held" or "declined".
func (m *Metrics) ReportVersion(outcome string) {
	if m == nil {
		return
	}
	m.reportVersions.WithLabelValues(outcome).Inc()
}

// Scanned observes the publish scan of one version.
func (m *Metrics) Scanned(took time.Duration) {
	if m == nil {
		return
	}
	m.scanDuration.Observe(took.Seconds())
}

// GateChecked counts a gate check recorded, by outcome.
func (m *Metrics) GateChecked(outcome string) {
	if m == nil {
		return
	}
	m.gateChecks.WithLabelValues(outcome).Inc()
}

// LongPolls sets what the long-poll gauge reads: how many this process
// holds open.
func (m *Metrics) LongPolls(open func() int) {
	if m == nil {
		return
	}
	m.longPolls.Store(&open)
}
