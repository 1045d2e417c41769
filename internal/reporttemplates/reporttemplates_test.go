package reporttemplates_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/assent-hq/assent/internal/reporttemplates"
)

// wantIDs are the built-in templates in their listed order. Agents keep
// these ids to copy from, so a change here breaks them.
var wantIDs = []string{"tpl_weekly_status", "tpl_incident_review", "tpl_dashboard"}

// files reads every file of a template by its path.
func files(t *testing.T, tpl reporttemplates.Template) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, fs.WalkDir(tpl.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(tpl.Files, p)
		out[p] = b
		return err
	}))
	return out
}

func TestListHasTheThreeTemplatesInOrder(t *testing.T) {
	list := reporttemplates.List()
	var ids []string
	for _, tpl := range list {
		ids = append(ids, tpl.ID)
		require.True(t, strings.HasPrefix(tpl.ID, "tpl_"), tpl.ID)
		require.NotEmpty(t, tpl.Name, tpl.ID)
		require.NotEmpty(t, tpl.Description, tpl.ID)
		require.NotNil(t, tpl.Files, tpl.ID)
	}
	require.Equal(t, wantIDs, ids)
	require.Equal(t, list, reporttemplates.List(), "the order is stable")
}

func TestGet(t *testing.T) {
	for _, want := range reporttemplates.List() {
		got, ok := reporttemplates.Get(want.ID)
		require.True(t, ok, want.ID)
		require.Equal(t, want, got)
	}
	for _, id := range []string{"", "tpl_", "tpl_unknown", "weekly_status", "TPL_WEEKLY_STATUS"} {
		_, ok := reporttemplates.Get(id)
		require.False(t, ok, id)
	}
}

func TestGetReturnsItsOwnExampleData(t *testing.T) {
	tpl, _ := reporttemplates.Get("tpl_dashboard")
	tpl.ExampleData["metrics"][0] = 'x'
	delete(tpl.ExampleData, "metrics")

	again, _ := reporttemplates.Get("tpl_dashboard")
	require.True(t, json.Valid(again.ExampleData["metrics"]), "a caller's change reaches nobody else")
}

// TestFiles: each template is index.html with the stylesheet and scripts
// it links to, and nothing else (no example data, no stray files).
func TestFiles(t *testing.T) {
	for _, tpl := range reporttemplates.List() {
		got := files(t, tpl)
		require.Contains(t, got, "index.html", tpl.ID)
		require.Contains(t, got, "style.css", tpl.ID)
		for p := range got {
			require.Contains(t, []string{".html", ".css", ".js"}, path.Ext(p), "%s: %s", tpl.ID, p)
		}
	}
}

// element finds the first element with the tag in the tree under n.
func element(n *html.Node, tag atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if found := element(c, tag); found != nil {
			return found
		}
	}
	return nil
}

// byID finds the element with the id in the tree under n.
func byID(n *html.Node, id string) *html.Node {
	if got, _ := attr(n, "id"); n.Type == html.ElementNode && got == id {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if found := byID(c, id); found != nil {
			return found
		}
	}
	return nil
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

// TestPagesAreValidAndAccessible holds each index.html to what a browser,
// a screen reader and the publish scan need: an HTML5 doctype, a language,
// a title, a viewport, one h1 and headings that skip no level, a caption
// for every table, a scope on every table header, and table frames that
// scroll by keyboard. The browser test runs axe-core on them besides.
func TestPagesAreValidAndAccessible(t *testing.T) {
	for _, tpl := range reporttemplates.List() {
		t.Run(tpl.ID, func(t *testing.T) {
			src := files(t, tpl)["index.html"]
			require.True(t, bytes.HasPrefix(bytes.ToLower(src), []byte("<!doctype html>\n")), "starts with the HTML5 doctype")

			doc, err := html.Parse(bytes.NewReader(src))
			require.NoError(t, err)
			root := element(doc, atom.Html)
			require.NotNil(t, root)
			lang, _ := attr(root, "lang")
			require.Equal(t, "en", lang)

			title := element(doc, atom.Title)
			require.NotNil(t, title)
			require.NotEmpty(t, text(title))

			var viewport, charset bool
			var h1s, last int
			var walk func(*html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode {
					switch n.DataAtom {
					case atom.Meta:
						if name, _ := attr(n, "name"); name == "viewport" {
							content, _ := attr(n, "content")
							viewport = strings.Contains(content, "width=device-width")
						}
						if cs, ok := attr(n, "charset"); ok {
							charset = strings.EqualFold(cs, "utf-8")
						}
					case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
						level := int(n.Data[1] - '0')
						require.LessOrEqual(t, level, last+1, "an <%s> (%q) skips a heading level", n.Data, text(n))
						last = level
						if level == 1 {
							h1s++
						}
						require.NotEmpty(t, text(n), "an empty <%s>", n.Data)
					case atom.Th:
						scope, _ := attr(n, "scope")
						require.Contains(t, []string{"col", "row"}, scope, "the header %q has a scope", text(n))
					case atom.Img:
						_, ok := attr(n, "alt")
						require.True(t, ok, "an image without alt text")
					case atom.Table:
						require.NotNil(t, element(n, atom.Caption), "a table has a caption")
					case atom.Div:
						// A frame that scrolls must take the keyboard focus, and a
						// focusable region needs a name.
						if class, _ := attr(n, "class"); strings.Contains(" "+class+" ", " table-wrap ") {
							tab, _ := attr(n, "tabindex")
							require.Equal(t, "0", tab, "a table's frame scrolls by keyboard too")
							label, _ := attr(n, "aria-labelledby")
							require.NotNil(t, byID(doc, label), "a table's frame is named by an element of the page (%q)", label)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			require.True(t, viewport, "a viewport meta with width=device-width")
			require.True(t, charset, "a utf-8 charset meta")
			require.Equal(t, 1, h1s, "one h1")
		})
	}
}

// urlAttrs are the attributes whose value a browser loads or follows.
var urlAttrs = map[string]bool{
	"src": true, "href": true, "srcset": true, "action": true, "formaction": true, "poster": true,
	"data": true, "cite": true, "background": true, "manifest": true, "ping": true, "xlink:href": true,
}

// notRelative says whether a URL is anything but a relative one: with a
// host (absolute, or protocol-relative, browsers reading backslashes as
// slashes), which the publish scan counts as another origin, or with any
// other scheme (data:, mailto:, javascript:).
func notRelative(s string) bool {
	s = strings.ReplaceAll(strings.TrimSpace(s), `\`, "/")
	if strings.HasPrefix(s, "//") {
		return true
	}
	u, err := url.Parse(s)
	return err != nil || u.Scheme != "" || u.Host != ""
}

// scriptURL finds what looks like a URL with a host in a script.
var scriptURL = regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"'\x60]*`)

// TestNothingLoadsFromAnotherOrigin: a report is served from an origin of
// its own, and the publish scan holds one that reaches another. So every
// URL in the markup is relative and names a file of the template (or a
// fragment of the page, or a dataset under _data/), and there are no
// forms, no <base>, no meta refresh, no inline event handlers or styles,
// and no inline scripts (so a strict Content-Security-Policy can serve the
// templates).
func TestNothingLoadsFromAnotherOrigin(t *testing.T) {
	for _, tpl := range reporttemplates.List() {
		t.Run(tpl.ID, func(t *testing.T) {
			all := files(t, tpl)
			for name, src := range all {
				switch path.Ext(name) {
				case ".html":
					z := html.NewTokenizer(bytes.NewReader(src))
					for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
						if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
							continue
						}
						tag, _ := z.TagName()
						require.NotContains(t, []string{"form", "base", "iframe", "object", "embed", "style"}, string(tag), "%s has a <%s>", name, tag)
						attrs := map[string]string{}
						for more := true; more; {
							var k, v []byte
							k, v, more = z.TagAttr()
							attrs[string(k)] = string(v)
						}
						for k, v := range attrs {
							require.False(t, strings.HasPrefix(k, "on"), "%s: <%s %s> runs script inline", name, tag, k)
							require.NotEqual(t, "style", k, "%s: <%s> has an inline style", name, tag)
							if !urlAttrs[k] {
								continue
							}
							require.False(t, notRelative(v), "%s: <%s %s=%q> is not a relative URL", name, tag, k, v)
							ref := strings.SplitN(strings.SplitN(v, "#", 2)[0], "?", 2)[0]
							if ref != "" && !strings.HasPrefix(ref, "_data/") {
								require.Contains(t, all, path.Clean(ref), "%s: <%s %s=%q> names no file of the template", name, tag, k, v)
							}
						}
						if string(tag) == "script" {
							require.NotEmpty(t, attrs["src"], "%s: scripts are files, not inline", name)
						}
						if string(tag) == "meta" {
							require.NotEqual(t, "refresh", strings.ToLower(attrs["http-equiv"]), "%s has a meta refresh", name)
						}
					}
				case ".css":
					css := strings.ToLower(string(src))
					require.NotContains(t, css, "@import", name)
					require.NotContains(t, css, "url(", "%s: a stylesheet loads nothing", name)
				case ".js":
					// The SVG namespace is a name, never fetched; no other URL may appear.
					for _, u := range scriptURL.FindAllString(string(src), -1) {
						require.Equal(t, "http://www.w3.org/2000/svg", u, "%s names another origin", name)
					}
					for _, api := range []string{"XMLHttpRequest", "WebSocket", "EventSource", "import(", "innerHTML", "eval(", "document.write"} {
						require.NotContains(t, string(src), api, name)
					}
				}
				require.NotContains(t, strings.ToLower(string(src)), "javascript:", name)
			}
		})
	}
}

// TestNothingLooksLikeASecret: the publish scan masks long tokens that mix
// letters and digits and holds a version with anything that looks like a
// key, so a template has none.
func TestNothingLooksLikeASecret(t *testing.T) {
	token := regexp.MustCompile(`[A-Za-z0-9_+/=-]{20,}`)
	for _, tpl := range reporttemplates.List() {
		for name, src := range files(t, tpl) {
			for _, m := range token.FindAllString(string(src), -1) {
				letters := strings.IndexFunc(m, unicode.IsLetter) >= 0
				digits := strings.IndexFunc(m, unicode.IsDigit) >= 0
				require.False(t, letters && digits, "%s/%s: %q looks like a secret", tpl.ID, name, m)
			}
		}
	}
}

// TestDashboardReadsItsDatasetRelatively: the report is served from an
// origin of its own and its dataset beside it at _data/metrics, so the
// script asks for exactly that relative path, and nothing else.
func TestDashboardReadsItsDatasetRelatively(t *testing.T) {
	tpl, _ := reporttemplates.Get("tpl_dashboard")
	all := files(t, tpl)
	require.Contains(t, string(all["index.html"]), `<script src="dashboard.js" defer></script>`)
	js := string(all["dashboard.js"])
	require.Contains(t, js, `const DATASET = "_data/metrics";`)
	require.Equal(t, 1, strings.Count(js, "fetch("), "one request")
	require.Contains(t, js, "fetch(DATASET,")
}

// metrics is the dataset's shape as the dashboard reads it.
type metrics struct {
	UpdatedAt string `json:"updatedAt"`
	KPIs      []struct {
		Label  string   `json:"label"`
		Value  *float64 `json:"value"`
		Unit   string   `json:"unit"`
		Change *float64 `json:"change"`
		Better string   `json:"better"`
	} `json:"kpis"`
	SeriesLabel string `json:"seriesLabel"`
	Series      []struct {
		Date  string   `json:"date"`
		Value *float64 `json:"value"`
	} `json:"series"`
}

// TestExampleData: the dashboard's example dataset has the documented
// shape, and is the very example the page shows under "How to feed this
// dashboard", so the two cannot drift apart. The other templates read no
// dataset.
func TestExampleData(t *testing.T) {
	for _, tpl := range reporttemplates.List() {
		if tpl.ID != "tpl_dashboard" {
			require.Nil(t, tpl.ExampleData, tpl.ID)
		}
	}
	tpl, _ := reporttemplates.Get("tpl_dashboard")
	require.Len(t, tpl.ExampleData, 1)
	example := tpl.ExampleData["metrics"]

	dec := json.NewDecoder(bytes.NewReader(example))
	dec.DisallowUnknownFields()
	var m metrics
	require.NoError(t, dec.Decode(&m))
	require.NotEmpty(t, m.UpdatedAt)
	require.NotEmpty(t, m.KPIs)
	for _, k := range m.KPIs {
		require.NotEmpty(t, k.Label)
		require.NotNil(t, k.Value, k.Label)
		require.Contains(t, []string{"", "up", "down"}, k.Better, k.Label)
	}
	require.NotEmpty(t, m.Series)
	for _, p := range m.Series {
		require.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, p.Date)
		require.NotNil(t, p.Value, p.Date)
	}

	doc, err := html.Parse(bytes.NewReader(files(t, tpl)["index.html"]))
	require.NoError(t, err)
	feed := byID(doc, "feed")
	require.NotNil(t, feed)
	require.Equal(t, "How to feed this dashboard", text(element(feed, atom.Summary)))
	shown := byID(feed, "example-metrics")
	require.NotNil(t, shown, "the page shows the example")
	require.JSONEq(t, string(example), text(shown))
}
