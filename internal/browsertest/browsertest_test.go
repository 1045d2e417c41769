package browsertest_test

import (
	"bytes"
	"context"
	"html/template"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/assent-hq/assent/internal/browsertest"
)

var formPage = template.Must(template.New("form").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>echo</title></head>
<body>
<form method="post" action="/">
  <label for="name">Name</label>
  <input id="name" name="name" type="text">
  <button id="send" type="submit">Send</button>
</form>
{{if .Posted}}<p id="result">You sent: {{.Name}}</p>{{end}}
</body></html>`))

// echoServer renders the form and, after a POST, the submitted value,
// escaped by html/template.
func echoServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := struct {
			Posted bool
			Name   string
		}{}
		if r.Method == http.MethodPost {
			data.Posted = true
			data.Name = r.PostFormValue("name")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := formPage.Execute(w, data); err != nil {
			t.Errorf("render: %v", err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFormRoundTripShowsScriptAsText(t *testing.T) {
	srv := echoServer(t)
	b := browsertest.New(t)
	ctx := b.Context()

	dialogs := recordDialogs(t, ctx)

	const payload = `<script>alert(1)</script>`
	b.Navigate(srv.URL)
	if got := b.Text(`label[for="name"]`); got != "Name" {
		t.Fatalf("label = %q, want %q", got, "Name")
	}
	b.Run(chromedp.SendKeys(chromedp.CSS("#name"), payload))
	b.ClickAndWait("#send")

	if got, want := b.Text("#result"), "You sent: "+payload; got != want {
		t.Errorf("result text = %q, want %q", got, want)
	}
	if loc := b.Location(); strings.TrimSuffix(loc, "/") != srv.URL {
		t.Errorf("location = %q, want %q", loc, srv.URL+"/")
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#result script").length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the payload became %d script element(s)", n)
	}

	shot := filepath.Join(t.TempDir(), "shots", "result.png")
	b.Screenshot(shot)
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 {
		t.Fatal("screenshot is empty")
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() == 0 || r.Dy() == 0 {
		t.Errorf("screenshot bounds = %v", r)
	}

	if got := dialogs(); len(got) > 0 {
		t.Errorf("the page opened dialogs: %q", got)
	}
}

// TestDialogsAreRecorded shows that recordDialogs notices an alert, so the
// check above is not vacuous.
func TestDialogsAreRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><p id="after">loaded</p><script>alert(1)</script>`))
	}))
	t.Cleanup(srv.Close)
	b := browsertest.New(t)
	dialogs := recordDialogs(t, b.Context())

	b.Navigate(srv.URL) // returns only once the alert was dismissed
	if got := b.Text("#after"); got != "loaded" {
		t.Errorf("text = %q", got)
	}
	if got := dialogs(); len(got) != 1 || got[0] != "alert: 1" {
		t.Errorf("dialogs = %q, want [\"alert: 1\"]", got)
	}
}

func TestFindChromium(t *testing.T) {
	t.Setenv("ASSENT_CHROMIUM", filepath.Join(t.TempDir(), "no-such-chromium"))
	if p, err := browsertest.FindChromium(); err == nil {
		t.Errorf("FindChromium() = %q, want an error for a missing ASSENT_CHROMIUM", p)
	}
}

// recordDialogs records every alert, confirm or prompt of the tab, and
// dismisses it so that a failing page does not hang until the deadline. It
// returns a func that lists them as "type: message".
func recordDialogs(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var mu sync.Mutex
	var dialogs []string
	err := chromedp.Listen(ctx, func(ev any) {
		ev2, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		mu.Lock()
		dialogs = append(dialogs, string(ev2.Type)+": "+ev2.Message)
		mu.Unlock()
		// A listener must not send commands itself.
		go func() {
			_, _ = chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (cdp.Empty, error) {
				return cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
			})
		}()
	})
	if err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), dialogs...)
	}
}

// TestAccessibilityFindsWhatBreaksWCAG: the check reports an unlabelled
// field and grey-on-white text, and nothing on a page that has neither.
func TestAccessibilityFindsWhatBreaksWCAG(t *testing.T) {
	pages := map[string]string{
		"/bad": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bad</title></head><body><main>
<h1>Bad</h1><form><input name="q" type="text"></form><p style="color:#bbb;background:#fff">faint</p></main></body></html>`,
		"/good": `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>good</title></head><body><main>
<h1>Good</h1><form><label for="q">Search</label><input id="q" name="q" type="text"></form><p style="color:#222;background:#fff">clear</p></main></body></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The app's own policy: axe-core must run under it too.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_, _ = w.Write([]byte(pages[r.URL.Path]))
	}))
	defer srv.Close()
	b := browsertest.New(t)

	b.Navigate(srv.URL + "/bad")
	var ids []string
	for _, v := range b.Accessibility() {
		ids = append(ids, v.ID)
		if !strings.Contains(v.String(), "\n    at ") {
			t.Errorf("violation %s names no element: %s", v.ID, v)
		}
	}
	for _, want := range []string{"label", "color-contrast"} {
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Errorf("want %q among %v", want, ids)
		}
	}

	b.Navigate(srv.URL + "/good")
	if v := b.Accessibility(); len(v) != 0 {
		t.Errorf("a clean page has violations: %v", v)
	}
}
