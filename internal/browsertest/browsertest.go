// Package browsertest drives a headless Chromium from tests with chromedp.
//
// New starts a fresh browser for one test and closes it when the test ends.
// The browser is Debian's chromium (/usr/bin/chromium, else "chromium" on
// PATH, or the path in ASSENT_CHROMIUM). Without it the test is skipped,
// unless ASSENT_REQUIRE_BROWSER=1, when it fails instead.
//
// The helpers call t.Fatal on error, so call them from the test's goroutine.
// For anything they do not cover, use chromedp directly with b.Context():
//
//	b := browsertest.New(t)
//	b.Navigate(srv.URL)
//	b.Run(chromedp.SendKeys(chromedp.CSS("#name"), "Ada"))
//	got := b.Text("#greeting")
//	b.Screenshot(filepath.Join(t.TempDir(), "page.png"))
package browsertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Timeout bounds everything a Browser does for one test, from the start of
// chromium to the last action.
const Timeout = 60 * time.Second

// closeTimeout bounds the graceful close of the browser in the cleanup.
const closeTimeout = 10 * time.Second

// DefaultPath is where Debian's chromium package installs the browser.
const DefaultPath = "/usr/bin/chromium"

// Browser is one headless chromium with one tab, owned by one test.
type Browser struct {
	t   testing.TB
	ctx context.Context
}

// FindChromium returns the browser to run: $ASSENT_CHROMIUM if set, else
// /usr/bin/chromium, else "chromium" on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("ASSENT_CHROMIUM"); p != "" {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", errors.New("ASSENT_CHROMIUM=" + p + " is not an executable: " + err.Error())
		}
		return found, nil
	}
	if found, err := exec.LookPath(DefaultPath); err == nil {
		return found, nil
	}
	found, err := exec.LookPath("chromium")
	if err != nil {
		return "", errors.New("no chromium at " + DefaultPath + " nor on PATH (apt-get install chromium, or set ASSENT_CHROMIUM)")
	}
	return found, nil
}

// Require returns the chromium to run, after making sure axe-core is
// there too; without either it skips t, or fails it under
// ASSENT_REQUIRE_BROWSER=1. A browser test calls it first, so that one
// which would skip does so before starting what it tests.
func Require(t testing.TB) string {
	t.Helper()
	path, err := FindChromium()
	if err == nil {
		_, err = axe()
	}
	if err != nil {
		if os.Getenv("ASSENT_REQUIRE_BROWSER") == "1" {
			t.Fatalf("browser tests need chromium and axe-core (ASSENT_REQUIRE_BROWSER=1): %v", err)
		}
		t.Skipf("browser test skipped (set ASSENT_REQUIRE_BROWSER=1 to fail instead): %v", err)
	}
	return path
}

// New starts a headless chromium for t, with a fresh profile under
// t.TempDir(), and returns it with one blank tab open. Everything is closed
// when the test ends. Every action of the Browser shares one deadline of
// Timeout from now.
func New(t testing.TB) *Browser {
	t.Helper()
	path := Require(t)

	// Made before the cleanup below is registered, so it is removed after
	// the browser has stopped.
	profile := filepath.Join(t.TempDir(), "chromium-profile")

	out := &lockedBuffer{}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		// The test machines have no network but localhost: without these
		// chromium keeps trying (and failing) to reach Google's services.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.CombinedOutput(out),
	)
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, browserCancel := chromedp.NewContext(allocCtx)

	// The first Run starts the browser and binds it to the context it gets,
	// so it must be one without a deadline; the deadline goes on a child.
	start := make(chan error, 1)
	go func() { start <- chromedp.Do(browserCtx) }()
	var err error
	select {
	case err = <-start:
	case <-time.After(Timeout):
		err = errors.New("timed out after " + Timeout.String())
	}

	ctx, cancel := context.WithTimeout(browserCtx, Timeout)
	t.Cleanup(func() {
		cancel()
		closeCtx, closeCancel := context.WithTimeout(browserCtx, closeTimeout)
		if err := chromedp.Cancel(closeCtx); err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("browsertest: closing chromium: %v", err)
		}
		closeCancel()
		browserCancel()
		allocCancel() // stops the process if still running, and waits for it
		if t.Failed() {
			t.Logf("browsertest: chromium output:\n%s", out.tail(8<<10))
		}
	})
	if err != nil {
		t.Fatalf("starting %s: %v\nchromium output:\n%s", path, err, out.tail(8<<10))
	}
	return &Browser{t: t, ctx: ctx}
}

// Context is the chromedp context of the tab, with the test's deadline, for
// calling chromedp.Run, chromedp.Do or chromedp.Events directly.
func (b *Browser) Context() context.Context { return b.ctx }

// Run runs the actions in order in the tab and fails the test on the first
// error.
func (b *Browser) Run(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// Navigate loads url in the tab and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("browser: navigate to %s: %v", url, err)
	}
}

// ClickAndWait clicks the first element matching the CSS selector, such as
// a form's submit button or a link, and waits for the load event of the page
// that the click opens.
func (b *Browser) ClickAndWait(selector string) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.WaitEvent(page.LoadEventFired, nil,
		chromedp.Click(chromedp.CSS(selector))))
	if err != nil {
		b.t.Fatalf("browser: click %q and wait for the page: %v", selector, err)
	}
}

// Text waits for the first element matching the CSS selector and returns its
// visible text.
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		b.t.Fatalf("browser: text of %q: %v", selector, err)
	}
	return s
}

// Location returns the URL of the document in the tab.
func (b *Browser) Location() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("browser: location: %v", err)
	}
	return s
}

// Screenshot saves a PNG of the whole page (beyond the viewport) to path,
// creating its folders.
func (b *Browser) Screenshot(path string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.t.Fatalf("browser: screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatalf("browser: screenshot: %v", err)
	}
}

// lockedBuffer collects chromium's output, written from chromedp's
// goroutines, to show it when a test fails.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// tail returns at most the last n bytes written.
func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buf.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
