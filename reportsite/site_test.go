package reportsite

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/tracing"
)

// The reports domain is checked at start, report hosts are every name
// under it (never the app), and the reader cookie is Lax only when the app
// and the reports share a site.
func TestDomainsAndHosts(t *testing.T) {
	_, err := New(Deps{AppURL: "https://app.reports.example.com", Domain: "reports.example.com"})
	assert.ErrorContains(t, err, "must not be served under the reports domain")
	_, err = New(Deps{AppURL: "https://app.example.com", Domain: "https://reports.example.com"})
	assert.ErrorContains(t, err, "ASSENT_REPORTS_DOMAIN")
	_, err = New(Deps{AppURL: "/relative", Domain: "reports.example.com"})
	assert.Error(t, err)

	prod, err := New(Deps{AppURL: "https://app.example.com", Domain: "Reports.Example.com."})
	require.NoError(t, err)
	assert.Equal(t, http.SameSiteLaxMode, prod.sameSite)
	assert.True(t, prod.secure)
	assert.Equal(t, "__Host-assent_reader", prod.cookieName())
	assert.Equal(t, "https://k1.reports.example.com", prod.Origin("k1"))
	for host, want := range map[string]string{"k1.reports.example.com": "k1", "K1.REPORTS.EXAMPLE.COM:443": "k1",
		"a.b.reports.example.com": "a.b", "reports.example.com": "", "app.example.com": "", "k1.reports.example.com.evil.example": ""} {
		key, ok := prod.keyOf(host)
		assert.Equal(t, want, key, host)
		assert.Equal(t, want != "", ok, host)
	}

	other, err := New(Deps{AppURL: "https://assent.example.com", Domain: "example-reports.net"})
	require.NoError(t, err)
	assert.Equal(t, http.SameSiteNoneMode, other.sameSite, "another site's frame gets no Lax cookie")

	dev, err := New(Deps{AppURL: "http://localhost:8080", Domain: "localhost:8080"})
	require.NoError(t, err, "the app may be the domain itself")
	assert.Equal(t, http.SameSiteNoneMode, dev.sameSite)
	assert.Equal(t, "assent_reader", dev.cookieName())
	key, ok := dev.keyOf("k2.localhost:8080")
	assert.True(t, ok)
	assert.Equal(t, "k2", key)
	_, ok = dev.keyOf("k2.localhost:9090")
	assert.False(t, ok, "another port is another server")
	assert.Equal(t, "http://*.localhost:8080", dev.FrameSource())
}

func TestContentTypesComeFromTheExtension(t *testing.T) {
	assert.Equal(t, "text/html; charset=utf-8", contentType("a/INDEX.HTML"))
	assert.Equal(t, "image/svg+xml", contentType("logo.svg"))
	assert.Equal(t, "application/octet-stream", contentType("data.bin"))
	assert.Equal(t, "application/octet-stream", contentType("noextension"))
}

// The app answers only on its own host (health checks on any), report
// hosts only report content.
func TestAppAnswersOnlyOnItsHost(t *testing.T) {
	site, err := New(Deps{AppURL: "https://assent.example.com", Domain: "reports.example.com"})
	require.NoError(t, err)
	app := site.Route(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for host, want := range map[string]int{
		"assent.example.com": http.StatusTeapot, "ASSENT.example.com:443": http.StatusTeapot,
		"203.0.113.7": http.StatusMisdirectedRequest, "rebind.attacker.example": http.StatusMisdirectedRequest,
		"assent.example.com:8443": http.StatusMisdirectedRequest,
	} {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/inbox", nil)
		req.Host = host
		app.ServeHTTP(w, req)
		assert.Equal(t, want, w.Code, host)
	}
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	req.Host = "10.0.0.9:8080"
	app.ServeHTTP(w, req)
	assert.Equal(t, http.StatusTeapot, w.Code, "health checks answer on any host")
}

// Every HTML page served carries the selection script's tag: before
// </head>, else first (after a doctype, so no page falls into quirks
// mode); the script posts to the app's origin and no other.
func TestPagesCarryTheSelectionScript(t *testing.T) {
	tag := `<script src="/_assent/select.js" defer></script>`
	for page, want := range map[string]string{
		"<html><HEAD><title>t</title></Head ><body>x": "<html><HEAD><title>t</title>" + tag + "</Head ><body>x",
		"<!DOCTYPE html><title>t</title><h1>x</h1>":   "<!DOCTYPE html>" + tag + "<title>t</title><h1>x</h1>",
		"\ufeff <!-- built --> <!doctype html>\n<p>x": "\ufeff <!-- built --> <!doctype html>" + tag + "\n<p>x",
		"<h1>No doctype</h1>":                         tag + "<h1>No doctype</h1>",
		"":                                            tag,
		"<title>t</title><p>a</p></head> <p>and </head> again": "<title>t</title><p>a</p>" + tag + "</head> <p>and </head> again",
	} {
		assert.Equal(t, want, tagged(t, page), page)
	}

	site, err := New(Deps{AppURL: "https://assent.example.com/", Domain: "reports.example.com"})
	require.NoError(t, err)
	js := string(site.selectJS)
	assert.Contains(t, js, `var appOrigin = "https://assent.example.com";`)
	assert.Contains(t, js, `postMessage({type: "assent:selection", text: text}, appOrigin)`)
	assert.Equal(t, 1, strings.Count(js, "postMessage"), "the script posts in one place, to the app")
	assert.Contains(t, string(selectScriptFor(`https://a.example"</script>`)), `"https://a.example\"\u003c/script\u003e"`, "the origin is a JSON string")
}

// A pinned version's address names a positive version number, written
// plainly; anything else under the prefix names nothing.
func TestVersionAddresses(t *testing.T) {
	for p, want := range map[string]target{
		"/":                       {path: "/"},
		"/a/b.html":               {path: "/a/b.html"},
		"/_data/x":                {path: "/_data/x"},
		"/_assent/v/3/":           {version: 3, path: "/"},
		"/_assent/v/12/a/b.css":   {version: 12, path: "/a/b.css"},
		"/_assent/v/2/_data/kpis": {version: 2, path: "/_data/kpis"},
		"/_assent/v/2":            {version: 2},
	} {
		got, ok := parseTarget(p)
		assert.True(t, ok, p)
		assert.Equal(t, want, got, p)
	}
	for _, p := range []string{"/_assent/v/0/", "/_assent/v/01/", "/_assent/v/-1/", "/_assent/v/x/", "/_assent/v/", "/_assent/v/+1/"} {
		_, ok := parseTarget(p)
		assert.False(t, ok, p)
	}
}

// A report host's request is counted and traced as the app's are, under
// its route's template: no report key or path is a label value.
func TestHostRequestsAreCountedAndTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	m := metrics.New()
	site, err := New(Deps{AppURL: "https://assent.example.com", Domain: "reports.example.com", Metrics: m})
	require.NoError(t, err)
	app := site.Route(http.NotFoundHandler())
	// Refused before the report is looked up: a write, and another
	// site's subresource.
	req := httptest.NewRequest(http.MethodPost, "/_data/sales", nil)
	req.Host = "rk7h2.reports.example.com"
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	app.ServeHTTP(httptest.NewRecorder(), req)
	req = httptest.NewRequest(http.MethodGet, "/_assent/v/3/chart.js", nil)
	req.Host = "rk7h2.reports.example.com"
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	app.ServeHTTP(httptest.NewRecorder(), req)

	out, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, "assent_http_requests_total")
	require.NoError(t, err)
	assert.Contains(t, string(out), `assent_http_requests_total{method="POST",route="<report>/_data/:name",status="405"} 1`)
	assert.Contains(t, string(out), `assent_http_requests_total{method="GET",route="<report>/_assent/v/:n/*path",status="403"} 1`)
	assert.NotContains(t, string(out), "rk7h2")

	spans := rec.Ended()
	require.Len(t, spans, 2)
	assert.Equal(t, "POST <report>/_data/:name", spans[0].Name())
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", spans[0].SpanContext().TraceID().String(), "the caller's trace goes on")
	assert.Equal(t, "GET <report>/_assent/v/:n/*path", spans[1].Name())
}

func TestHostRoutes(t *testing.T) {
	for p, want := range map[string]string{
		"/": "<report>/*path", "/a/b.html": "<report>/*path", "/_data/sales": "<report>/_data/:name",
		"/_assent/v/2/": "<report>/_assent/v/:n/*path", "/_assent/v/2/_data/sales": "<report>/_assent/v/:n/_data/:name",
		"/_assent/v/x/": "<report>/_assent/v/:n", "/_assent/enter": "<report>/_assent/enter",
		"/_assent/select.js": "<report>/_assent/select.js",
	} {
		assert.Equal(t, want, hostRoute(p), p)
	}
}
