package reporttemplates_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/reporttemplates"
)

// site serves a template as a report is served, from an origin of its
// own, with the dataset "metrics" beside it at _data/metrics answering
// whatever the test sets.
type site struct {
	url string

	mu      sync.Mutex
	status  int
	dataset []byte
}

func serve(t *testing.T, tpl reporttemplates.Template) *site {
	t.Helper()
	s := &site{status: http.StatusNotFound}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_data/metrics", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(s.status)
		_, _ = w.Write(s.dataset)
	})
	mux.Handle("GET /", http.FileServerFS(tpl.Files))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/"
	return s
}

// answer sets what _data/metrics answers from now on.
func (s *site) answer(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.dataset = status, []byte(body)
}

func eval[T any](t *testing.T, b *browsertest.Browser, script string) T {
	t.Helper()
	v, err := chromedp.Run(b.Context(), chromedp.Evaluate[T](script))
	require.NoError(t, err, script)
	return v
}

// settled waits until the dashboard has left its loading panel and says
// which one panel a reader sees instead.
func settled(t *testing.T, b *browsertest.Browser) string {
	t.Helper()
	v, err := chromedp.Run(b.Context(), chromedp.Evaluate[string](`new Promise((done) => {
		const seen = (id) => document.getElementById(id).checkVisibility();
		const until = Date.now() + 10000;
		const check = () => {
			if (seen("state-loading") && Date.now() < until) return setTimeout(check, 20);
			const shown = ["state-loading", "state-empty", "state-error", "figures"].filter(seen);
			done(shown.length === 1 ? shown[0].replace("state-", "") : "shown: " + shown.join(", "));
		};
		check();
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	return v
}

func darkMode(t *testing.T, b *browsertest.Browser, dark bool) {
	t.Helper()
	value := "light"
	if dark {
		value = "dark"
	}
	_, err := chromedp.Call(b.Context(), emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}}})
	require.NoError(t, err)
}

// TestBrowserDashboard: in a real browser the dashboard draws the example
// dataset (a card per key figure, a point per day, the figures as a table),
// says there is no data when the dataset is missing or empty, and shows an
// error it can retry when the dataset cannot be read.
func TestBrowserDashboard(t *testing.T) {
	browsertest.Require(t)
	tpl, _ := reporttemplates.Get("tpl_dashboard")
	s := serve(t, tpl)
	b := browsertest.New(t)

	s.answer(http.StatusOK, string(tpl.ExampleData["metrics"]))
	b.Navigate(s.url)
	require.Equal(t, "figures", settled(t, b))
	require.Equal(t, 4, eval[int](t, b, `document.querySelectorAll("#kpis li").length`))
	// Figures are written in the reader's locale, as the browser formats them.
	latest := eval[string](t, b, `(12480).toLocaleString()`)
	require.Equal(t, latest, eval[string](t, b, `document.querySelector("#kpis .kpi-value").textContent`))
	require.Equal(t, "3.4%", eval[string](t, b, `document.querySelectorAll("#kpis .kpi-value")[1].textContent`))
	require.Equal(t, []string{"good", "good", "good", "bad"}, eval[[]string](t, b,
		`[...document.querySelectorAll("#kpis .kpi-change")].map((e) => e.classList[1])`),
		"a fall in load time is good news, a rise in tickets bad")
	require.Equal(t, 14, eval[int](t, b, `document.querySelectorAll("#chart svg circle").length`))
	require.Equal(t, 14, eval[int](t, b, `document.querySelector("#chart polyline").points.length`))
	require.Equal(t, 14, eval[int](t, b, `document.querySelectorAll("#data-rows tr").length`))
	require.Equal(t, "Daily active users", b.Text("#chart-title"))
	require.Contains(t, b.Text("#updated"), "2026")
	require.Contains(t, eval[string](t, b, `document.querySelector("#chart svg desc").textContent`), "latest "+latest)
	for _, dark := range []bool{false, true} {
		darkMode(t, b, dark)
		b.CheckAccessibility("the dashboard with data")
	}
	darkMode(t, b, false)

	for _, missing := range []struct {
		status int
		body   string
	}{
		{http.StatusNotFound, `{"error": "not found"}`},
		{http.StatusOK, `{"kpis": [], "series": []}`},
		{http.StatusOK, ``},
	} {
		s.answer(missing.status, missing.body)
		b.Navigate(s.url)
		require.Equal(t, "empty", settled(t, b), "%d %s", missing.status, missing.body)
	}
	require.Contains(t, b.Text("#state-empty"), "No data yet")
	b.CheckAccessibility("the dashboard without data")
	b.Run(chromedp.Click(chromedp.CSS("#state-empty a")))
	require.True(t, eval[bool](t, b, `document.getElementById("feed").open`), "the link opens the instructions")

	s.answer(http.StatusOK, `{"kpis": [`)
	b.Navigate(s.url)
	require.Equal(t, "error", settled(t, b))
	require.Contains(t, b.Text("#error-detail"), "not valid JSON")

	s.answer(http.StatusInternalServerError, `{}`)
	b.Navigate(s.url)
	require.Equal(t, "error", settled(t, b))
	require.Contains(t, b.Text("#error-detail"), "HTTP 500")
	b.CheckAccessibility("the dashboard failing to read its data")

	s.answer(http.StatusOK, `{"series": [{"date": "2026-03-02", "value": 5}, {"date": "2026-03-01", "value": 3}]}`)
	b.Run(chromedp.Click(chromedp.CSS("#retry")))
	require.Equal(t, "figures", settled(t, b), "the retry reads the dataset again")
	require.False(t, eval[bool](t, b, `document.querySelector("#kpis-heading").checkVisibility()`), "no key figures, no heading for them")
	require.Equal(t, []string{"3", "5"}, eval[[]string](t, b,
		`[...document.querySelectorAll("#data-rows td")].map((e) => e.textContent)`), "the points are drawn oldest first")

	// A year of daily points is a line with one dot, the latest; a figure
	// without a value shows a dash rather than "undefined".
	var long strings.Builder
	day := time.Date(2025, 3, 7, 0, 0, 0, 0, time.UTC)
	for i := range 365 {
		if i > 0 {
			long.WriteString(",")
		}
		fmt.Fprintf(&long, `{"date": %q, "value": %d}`, day.AddDate(0, 0, i).Format(time.DateOnly), 1000+i%7*50)
	}
	s.answer(http.StatusOK, `{"kpis": [{"label": "Pending"}], "series": [`+long.String()+`]}`)
	b.Navigate(s.url)
	require.Equal(t, "figures", settled(t, b))
	require.Equal(t, "—", eval[string](t, b, `document.querySelector("#kpis .kpi-value").textContent`))
	require.Equal(t, 365, eval[int](t, b, `document.querySelector("#chart polyline").points.length`))
	require.Equal(t, 1, eval[int](t, b, `document.querySelectorAll("#chart svg circle").length`))
}

// TestBrowserTemplatesAreAccessible runs axe-core on the static templates
// in both colour schemes, which checks their contrast among the rest.
func TestBrowserTemplatesAreAccessible(t *testing.T) {
	browsertest.Require(t)
	b := browsertest.New(t)
	for _, id := range []string{"tpl_weekly_status", "tpl_incident_review"} {
		tpl, _ := reporttemplates.Get(id)
		s := serve(t, tpl)
		b.Navigate(s.url)
		require.Equal(t, "complete", eval[string](t, b, `document.readyState`))
		for _, dark := range []bool{false, true} {
			darkMode(t, b, dark)
			b.CheckAccessibility(id)
		}
		darkMode(t, b, false)
	}
}
