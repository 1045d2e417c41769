package browsertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/chromedp/chromedp"
)

// The accessibility check runs axe-core (Deque's engine, the one browser
// audits use) in the page. It is an npm package: `npm ci` in the axe folder
// beside this file installs it, as .ci/run does; ASSENT_AXE names another
// copy of axe.min.js.

// axeRules are the rule sets checked: WCAG 2.0 and 2.1, levels A and AA
// (names and labels, contrast, structure, keyboard use).
const axeRules = `["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]`

// Violation is one axe rule the page breaks, with the elements that break it.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target         []any  `json:"target"`
		FailureSummary string `json:"failureSummary"`
	} `json:"nodes"`
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s", v.ID, v.Impact, v.Help)
	for _, n := range v.Nodes {
		fmt.Fprintf(&b, "\n    at %v: %s", n.Target, strings.ReplaceAll(n.FailureSummary, "\n", " "))
	}
	return b.String()
}

var axe = sync.OnceValues(func() (string, error) {
	path := os.Getenv("ASSENT_AXE")
	if path == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return "", errors.New("cannot tell where browsertest's source is")
		}
		path = filepath.Join(filepath.Dir(file), "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("axe-core is not installed (npm ci --prefix internal/browsertest/axe, or set ASSENT_AXE): %w", err)
	}
	return string(src), nil
})

// Accessibility runs axe-core's WCAG 2.1 A and AA rules on the page in the
// tab and returns what it breaks (New made sure axe-core is there).
func (b *Browser) Accessibility() []Violation {
	b.t.Helper()
	src, err := axe()
	if err != nil {
		b.t.Fatalf("accessibility check: %v", err)
	}
	// Loaded into each page: a navigation starts a fresh one.
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](src+";\ntrue")); err != nil {
		b.t.Fatalf("accessibility check: load axe-core: %v", err)
	}
	found, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]Violation](
		`axe.run(document, {runOnly: {type: "tag", values: `+axeRules+`}}).then(r => r.violations)`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("accessibility check: %v", err)
	}
	return found
}

// CheckAccessibility fails the test, without stopping it, for each WCAG
// 2.1 A or AA rule the page in the tab breaks; page names it in the message.
func (b *Browser) CheckAccessibility(page string) {
	b.t.Helper()
	for _, v := range b.Accessibility() {
		b.t.Errorf("%s is not accessible: %s", page, v)
	}
}
