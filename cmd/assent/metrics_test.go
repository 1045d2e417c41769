package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/deploy/observability"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/testenv"
)

// TestMetrics runs dev on PostgreSQL, makes a few requests (an approval
// created and decided and delivered to a webhook, a report published, a
// gate check) and reads /metrics: the requests by route template, the
// deliveries' outcomes, the open requests by kind and the Temporal SDK's
// worker metrics. Then serve with ASSENT_METRICS_ADDR, which moves
// /metrics off the API's listener, and worker, on the same database and
// Temporal, whose own listener serves /healthz, /readyz and /metrics, or
// only the probes when ASSENT_METRICS_ADDR is set. Last, every metric the
// alert rules and the dashboard name is one these processes serve.
func TestMetrics(t *testing.T) {
	pg := testenv.PostgresURL(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	var delivered atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { delivered.Add(1) }))
	defer recv.Close()

	dataDir := filepath.Join(t.TempDir(), ".assent")
	temporalPort := freePort(t)
	apiURL, _, _, stop := startDev(t, dataDir, "--database-url", pg, "--temporal-port", temporalPort)
	defer stop()
	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	admin := demoMember(t, boot, "admin")
	var sink any

	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey, fmt.Sprintf(`{"url":%q}`, recv.URL+"/hook"), &sink))
	var a struct{ ID string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey,
		fmt.Sprintf(`{"title":"Pay","risk":"high","approvers":[%q]}`, admin.Email), &a))
	require.Eventually(t, func() bool {
		return postJSON(t, apiURL+"/api/v1/approvals/"+a.ID+"/decision", admin.Token, `{"decision":"approve"}`, &sink) == 200
	}, 15*time.Second, 100*time.Millisecond)
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", boot.AgentKey, `{"title":"Q3","content":"<h1>Q3</h1>"}`, &sink))
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/actions", boot.AdminKey,
		`{"name":"ping","inputSchema":{"type":"object"},"policy":[{"name":"all","condition":"true","outcome":"allow"}]}`, &sink))
	require.Equal(t, 200, postJSON(t, apiURL+"/api/v1/gate", boot.AgentKey, `{"action":"ping","input":{}}`, &sink))
	assert.Equal(t, 404, getJSON(t, apiURL+"/no/such/"+a.ID, "", nil))
	require.Eventually(t, func() bool { return delivered.Load() >= 2 }, 30*time.Second, 100*time.Millisecond, "requested and approved delivered")

	var dev map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		dev = scrape(t, apiURL+"/metrics")
		return value(dev, "assent_delivery_attempts_total", "outcome", "delivered", "attempt", "1") >= 2 &&
			value(dev, "temporal_workflow_task_queue_poll_succeed_total") > 0
	}, 30*time.Second, 500*time.Millisecond)
	assert.Equal(t, 1.0, value(dev, "assent_http_requests_total", "route", "/api/v1/approvals", "method", "POST", "status", "201"))
	assert.GreaterOrEqual(t, value(dev, "assent_http_requests_total", "route", "/api/v1/approvals/:id/decision", "method", "POST", "status", "200"), 1.0)
	assert.Equal(t, 1.0, value(dev, "assent_http_requests_total", "route", "unmatched", "method", "GET", "status", "404"))
	for _, s := range dev["assent_http_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			assert.NotContains(t, l.GetValue(), a.ID, "no id is a label value")
		}
	}
	assert.Equal(t, 1.0, value(dev, "assent_requests_created_total", "kind", "approval"))
	assert.Equal(t, 1.0, value(dev, "assent_requests_settled_total", "kind", "approval", "outcome", "approved"))
	assert.Equal(t, 1.0, value(dev, "assent_request_decision_seconds", "kind", "approval", "risk", "high"))
	assert.GreaterOrEqual(t, value(dev, "assent_delivery_first_success_seconds", "target", "webhook"), 2.0)
	for _, kind := range []string{"approval", "collection", "review"} {
		assert.Equal(t, 0.0, value(dev, "assent_requests_open", "kind", kind), "open %ss", kind)
		assert.Contains(t, labelValues(dev, "assent_requests_open", "kind"), kind)
	}
	assert.Contains(t, dev, "assent_outbox_lag_seconds")
	assert.Equal(t, 1.0, value(dev, "assent_report_versions_total", "outcome", "live"))
	assert.Equal(t, 1.0, value(dev, "assent_publish_scan_seconds"))
	assert.Equal(t, 1.0, value(dev, "assent_gate_checks_total", "outcome", "allowed"))
	assert.Greater(t, value(dev, "temporal_long_request_total", "operation", "PollWorkflowTaskQueue"), 0.0)
	assert.Greater(t, value(dev, "temporal_request_total"), 0.0)
	assert.Contains(t, dev, "go_goroutines")
	assert.Contains(t, dev, "process_resident_memory_bytes")

	key, err := os.ReadFile(filepath.Join(dataDir, config.SecretKeyFile))
	require.NoError(t, err)
	t.Setenv("ASSENT_SECRET_KEY", strings.TrimSpace(string(key)))
	t.Setenv("ASSENT_BASE_URL", apiURL)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "") // serve and worker refuse it
	shared := []string{"--database-url", pg, "--temporal-address", "127.0.0.1:" + temporalPort, "--log-level", "warn"}

	// serve with its metrics on an address of their own.
	servePort, serveMetrics := freePort(t), freePort(t)
	stopServe := runInProcess(t, append([]string{"serve", "--http-addr", "127.0.0.1:" + servePort, "--base-url", "http://127.0.0.1:" + servePort,
		"--metrics-addr", "127.0.0.1:" + serveMetrics}, shared...),
		"http://127.0.0.1:"+servePort+"/readyz")
	assert.Equal(t, 200, getJSON(t, "http://127.0.0.1:"+servePort+"/api/v1/me", boot.AgentKey, nil))
	assert.Equal(t, 404, getJSON(t, "http://127.0.0.1:"+servePort+"/metrics", "", nil), "not on the API's listener")
	served := scrape(t, "http://127.0.0.1:"+serveMetrics+"/metrics")
	assert.Equal(t, 1.0, value(served, "assent_http_requests_total", "route", "/api/v1/me", "method", "GET", "status", "200"))
	assert.Equal(t, 404, status(t, "http://127.0.0.1:"+serveMetrics+"/readyz"), "the metrics listener serves metrics alone")
	stopServe()

	// worker: its probes and metrics on its own listener.
	workerPort := freePort(t)
	worker := "http://127.0.0.1:" + workerPort
	stopWorker := runInProcess(t, append([]string{"worker", "--worker-http-addr", "127.0.0.1:" + workerPort}, shared...), worker+"/readyz")
	assert.Equal(t, 200, status(t, worker+"/healthz"))
	var ready struct{ Status string }
	require.Equal(t, 200, getJSON(t, worker+"/readyz", "", &ready))
	assert.Equal(t, "ready", ready.Status)
	var worked map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		worked = scrape(t, worker+"/metrics")
		return value(worked, "temporal_long_request_total", "operation", "PollActivityTaskQueue") > 0
	}, 30*time.Second, 500*time.Millisecond, "the worker polls")
	assert.Contains(t, worked, "assent_outbox_lag_seconds")
	assert.Contains(t, labelValues(worked, "assent_requests_open", "kind"), "approval")
	assert.Equal(t, 404, status(t, worker+"/api/v1/me"))
	stopWorker()

	// worker with ASSENT_METRICS_ADDR: probes on its listener, metrics apart.
	metricsPort := freePort(t)
	stopWorker = runInProcess(t, append([]string{"worker", "--worker-http-addr", "127.0.0.1:" + workerPort, "--metrics-addr", "127.0.0.1:" + metricsPort},
		shared...), worker+"/readyz")
	assert.Equal(t, 404, status(t, worker+"/metrics"))
	assert.Contains(t, scrape(t, "http://127.0.0.1:"+metricsPort+"/metrics"), "assent_outbox_lag_seconds")
	stopWorker()

	// Every metric the alerts and the dashboard use is served: dev's and
	// the worker's together are every process's.
	exprs, err := observability.Expressions()
	require.NoError(t, err)
	require.False(t, serves(dev, "assent_no_such_metric"))
	for where, e := range exprs {
		names, err := observability.MetricNames(e)
		require.NoError(t, err, where)
		for _, n := range names {
			assert.True(t, serves(dev, n) || serves(worked, n), "%s uses %s, which no process serves", where, n)
		}
	}
}

// runInProcess runs an assent command until the returned function stops
// it, once ready answers 200.
func runInProcess(t *testing.T, args []string, ready string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, io.Discard, &out) }()
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			t.Fatalf("assent %s exited early: %v\n%s", args[0], err, out.String())
		default:
		}
		return status(t, ready) == 200
	}, 60*time.Second, 100*time.Millisecond, "assent %s: %s", args[0], &out)
	return func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "assent %s must stop cleanly: %s", args[0], out.String())
		case <-time.After(30 * time.Second):
			t.Fatalf("assent %s did not stop", args[0])
		}
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	code, err := httpGet(url)
	if err != nil {
		return 0
	}
	return code
}

// scrape reads url's metrics in Prometheus's text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value sums the samples of family name whose labels include the pairs
// given: a counter's or gauge's value, a histogram's count.
func value(families map[string]*dto.MetricFamily, name string, pairs ...string) float64 {
	sum := 0.0
	for _, m := range families[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i < len(pairs); i += 2 {
			match = match && labels[pairs[i]] == pairs[i+1]
		}
		if match {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

func labelValues(families map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	for _, m := range families[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

// serves says whether name is a family served, or a histogram's series.
func serves(families map[string]*dto.MetricFamily, name string) bool {
	if _, ok := families[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if f, ok := families[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) &&
			(f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
			return true
		}
	}
	return false
}

// TestMetricsStayOffServesListener: serve's API listener, which the
// public reaches, serves no /metrics (404) unless ASSENT_METRICS_TOKEN is
// set, and then only to a request bearing it (401 otherwise); dev's
// serves them to anyone, as before, or behind the token when it is set.
func TestMetricsStayOffServesListener(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	get := func(h http.Handler, auth string) int {
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Host = "127.0.0.1:8080"
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	const token = "m3trics-t0ken"
	t.Setenv("ASSENT_METRICS_TOKEN", "")
	serve, _, _ := buildHandler(t, "serve", quiet)
	assert.Equal(t, 404, get(serve, ""), "serve without a token")
	assert.Equal(t, 404, get(serve, "Bearer "+token))
	dev, _, _ := buildHandler(t, "dev", quiet)
	assert.Equal(t, 200, get(dev, ""), "dev, on loopback")

	t.Setenv("ASSENT_METRICS_TOKEN", token)
	serve, _, _ = buildHandler(t, "serve", quiet)
	assert.Equal(t, 401, get(serve, ""))
	assert.Equal(t, 401, get(serve, "Bearer nope"))
	assert.Equal(t, 401, get(serve, token), "the token without its scheme")
	assert.Equal(t, 200, get(serve, "Bearer "+token))
	assert.Equal(t, 200, get(serve, "bearer "+token), "the scheme's case does not matter")
	dev, _, _ = buildHandler(t, "dev", quiet)
	assert.Equal(t, 401, get(dev, ""))
	assert.Equal(t, 200, get(dev, "Bearer "+token))

	// The listener of metrics alone asks for the token too.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var g errgroup.Group
	serveMetrics(ctx, &g, l, metrics.New(), token, quiet)
	defer func() { cancel(); _ = g.Wait() }()
	apart := "http://" + l.Addr().String() + "/metrics"
	assert.Equal(t, 401, status(t, apart))
	req, err := http.NewRequest("GET", apart, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}
