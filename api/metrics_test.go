package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// /metrics counts each request by its route's template, never its path,
// counts a refusal by the status it became, and is not served on the
// API's listener when the process serves it elsewhere.
func TestMetricsRoute(t *testing.T) {
	t.Parallel()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	svc := app.Build(app.Deps{Store: store, Logger: quiet})
	m := metrics.New()
	h := api.New(api.Deps{Logger: quiet, Services: svc.API(), Metrics: m})
	get := func(h http.Handler, path, key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	assert.Equal(t, 401, get(h, "/api/v1/approvals/apr_01ABC", "asnt_agent_nope").Code)
	assert.Equal(t, 404, get(h, "/api/v1/approvals/apr_01ABC/nope", "").Code)
	assert.Equal(t, 200, get(h, "/healthz", "").Code)
	r := get(h, "/metrics", "")
	require.Equal(t, 200, r.Code)
	assert.True(t, strings.HasPrefix(r.Header().Get("Content-Type"), "text/plain"), r.Header().Get("Content-Type"))
	body := r.Body.String()
	assert.Contains(t, body, `assent_http_requests_total{method="GET",route="/api/v1/approvals/:id",status="401"} 1`)
	assert.Contains(t, body, `assent_http_requests_total{method="GET",route="unmatched",status="404"} 1`)
	assert.Contains(t, body, `assent_http_requests_total{method="GET",route="/healthz",status="200"} 1`)
	assert.NotContains(t, body, "apr_01ABC")
	assert.Contains(t, body, "assent_long_polls_open 0")
	assert.Regexp(t, `(?m)^assent_build_info\{commit="",goversion="go1\.[^"]+",version="\(devel\)"\} 1$`, body)

	apart := api.New(api.Deps{Logger: quiet, Services: svc.API(), Metrics: metrics.New(), NoMetrics: true})
	assert.Equal(t, 404, get(apart, "/metrics", "").Code)
}

// The worker's listener answers the probes as the API does, and metrics
// when given them.
func TestProbes(t *testing.T) {
	t.Parallel()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	svc := app.Build(app.Deps{Store: store, Logger: quiet})
	for _, withMetrics := range []bool{true, false} {
		var served http.Handler
		if withMetrics {
			served = metrics.New().Handler("")
		}
		h := api.Probes(quiet, svc.Instance, served)
		do := func(path string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec
		}
		assert.Equal(t, "{\"status\":\"ok\"}\n", do("/healthz").Body.String())
		ready := do("/readyz")
		assert.Equal(t, 503, ready.Code, "no Temporal")
		assert.Contains(t, ready.Body.String(), `"temporal":"down: no client configured"`)
		assert.Contains(t, ready.Body.String(), `"version":"(devel)"`, "the version of a test build")
		assert.Contains(t, do("/nope").Body.String(), `"not_found"`)
		if withMetrics {
			assert.Contains(t, do("/metrics").Body.String(), "go_goroutines")
		} else {
			assert.Equal(t, 404, do("/metrics").Code)
		}
	}
}
