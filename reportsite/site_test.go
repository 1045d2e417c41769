package reportsite

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
