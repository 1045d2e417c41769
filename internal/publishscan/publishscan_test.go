package publishscan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

var shared = func() *Scanner {
	s, err := New()
	if err != nil {
		panic(err)
	}
	return s
}()

// rnd makes a fake secret's random part, the same on every run.
func rnd(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64     = alnum + "+/"
)

// Fake secrets of several providers, built from pieces so no literal in
// this repository looks like one.
var fakes = []struct {
	name, rule, secret, line string
	severity                 string
}{
	{"aws", "aws-access-token", "AK" + "IA" + rnd(1, 16, upper32), "aws_access_key_id = %s", Decline},
	{"github", "github-pat", "gh" + "p_" + rnd(2, 36, alnum), `const token = "%s";`, Decline},
	{"slack", "slack-bot-token", "xo" + "xb-" + rnd(3, 12, "0123456789") + "-" + rnd(4, 12, "0123456789") + "-" + rnd(5, 24, alnum), `"slack": "%s"`, Decline},
	{"stripe", "stripe-access-token", "sk" + "_live_" + rnd(6, 32, alnum), "<code>%s</code>", Decline},
	{"gcp", "gcp-api-key", "AI" + "za" + rnd(7, 35, alnum), `key=%s`, Decline},
	{"private key", "private-key", "-----BEGIN RSA " + "PRIVATE KEY-----\n" + rnd(8, 64, b64) + "\n" + rnd(9, 64, b64) + "\n" + rnd(10, 20, b64) + "\n-----END RSA " + "PRIVATE KEY-----", "<pre>%s</pre>", Decline},
	{"generic", "generic-api-key", rnd(11, 32, "0123456789abcdef"), `<p>api_key: "%s"</p>`, Hold},
}

func TestSecretsOfSeveralProviders(t *testing.T) {
	for _, f := range fakes {
		t.Run(f.name, func(t *testing.T) {
			page := "<!doctype html>\n<title>Report</title>\n<p>intro</p>\n" + fmt.Sprintf(f.line, f.secret) + "\n<p>end</p>\n"
			found, err := shared.Scan(context.Background(), []File{{Path: "pages/index.html", Content: []byte(page)}})
			require.NoError(t, err)
			require.NotEmpty(t, found, "no finding for %s", f.name)
			var hit *Finding
			for i := range found {
				if found[i].Rule == f.rule {
					hit = &found[i]
				}
			}
			require.NotNil(t, hit, "%s: rule %s not among %+v", f.name, f.rule, found)
			assert.Equal(t, "pages/index.html", hit.File)
			assert.Equal(t, 4, hit.Line)
			assert.Equal(t, f.severity, hit.Severity)
			assert.Contains(t, hit.Excerpt, "[REDACTED]")
			out, err := json.Marshal(found)
			require.NoError(t, err)
			for _, part := range strings.Split(f.secret, "\n") {
				if len(part) > 4 && !strings.HasPrefix(part, "-----") {
					assert.NotContains(t, string(out), part[4:], "the secret is in the findings")
				}
			}
			if f.severity == Decline {
				assert.Equal(t, Declined, Outcome(found))
			} else {
				assert.Equal(t, Held, Outcome(found))
			}
		})
	}
}

// TestNothingExemptsASecret: an allow comment, or a file name the default
// configuration allowlists, does not exempt a secret.
func TestNothingExemptsASecret(t *testing.T) {
	key := fakes[0].secret
	for _, f := range []File{
		{Path: "index.html", Content: []byte("aws_access_key_id = " + key + " <!-- gitleaks" + ":allow -->")},
		{Path: "package-lock.json", Content: []byte(`{"key": "` + key + `"}`)},
		{Path: "go.sum", Content: []byte("x " + key)},
		{Path: "logo.svg", Content: []byte("<svg><!-- " + key + " --></svg>")},
	} {
		found, err := shared.Scan(context.Background(), []File{f})
		require.NoError(t, err)
		assert.Equal(t, Declined, Outcome(found), "%s: %+v", f.Path, found)
	}
}

// TestTheScanLogsNoSecret: nothing the scan or gitleaks writes carries the
// secret.
func TestTheScanLogsNoSecret(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout, stderr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	for _, f := range fakes {
		_, err := shared.Scan(context.Background(), []File{{Path: "index.html", Content: []byte(fmt.Sprintf(f.line, f.secret))}})
		require.NoError(t, err)
	}
	os.Stdout, os.Stderr = stdout, stderr
	require.NoError(t, w.Close())
	logged, err := io.ReadAll(r)
	require.NoError(t, err)
	for _, f := range fakes {
		assert.NotContains(t, string(logged), f.secret[4:min(len(f.secret), 20)])
	}
}

// TestDecliningRulesExist holds every declining rule id to gitleaks'
// default configuration.
func TestDecliningRulesExist(t *testing.T) {
	d, err := detect.NewDetectorDefaultConfig()
	require.NoError(t, err)
	rules := d.Config.Rules
	var _ config.Rule
	for _, id := range declining {
		_, ok := rules[id]
		assert.True(t, ok, "gitleaks has no rule %q", id)
	}
}

func TestBinaryFilesAreNotScanned(t *testing.T) {
	content := append([]byte("\x89PNG\x00\x00"), []byte(fakes[0].secret)...)
	found, err := shared.Scan(context.Background(), []File{{Path: "x.png", Content: content}})
	require.NoError(t, err)
	assert.Empty(t, found)
}

func TestUnsafeHTML(t *testing.T) {
	cases := []struct {
		name, html string
		rule       string
		line       int
	}{
		{"password form off origin", "<p>\n<form action=\"https://collect.example.net/login\" method=post>\n<input name=u><input type=password name=p></form>", RulePasswordForm, 2},
		{"protocol-relative action", `<form action="//evil.example/x"><input type="PASSWORD"></form>`, RulePasswordForm, 1},
		{"backslashes", `<form action="\\evil.example\x"><input type=password></form>`, RulePasswordForm, 1},
		{"formaction off origin", `<form action="/ok"><input type=password><button formaction="https://evil.example/">Go</button></form>`, RulePasswordForm, 1},
		{"form never closed", `<form action="https://evil.example/"><input type=password>`, RulePasswordForm, 1},
		{"meta refresh", `<meta http-equiv="Refresh" content="0; URL='https://evil.example/'">`, RuleMetaRefresh, 1},
		{"meta refresh without url=", `<meta http-equiv=refresh content="5, https://evil.example/">`, RuleMetaRefresh, 1},
		{"javascript link", "<a href=\"javascript:alert(1)\">x</a>", RuleJavaScriptURL, 1},
		{"javascript with spaces and case", "\n\n<a href=\"  JaVa\tScRiPt:alert(1)\">x</a>", RuleJavaScriptURL, 3},
		{"javascript as entities", `<a href="&#106;avascript:alert(1)">x</a>`, RuleJavaScriptURL, 1},
		{"javascript in area", `<map><area href="javascript:void(0)"></map>`, RuleJavaScriptURL, 1},
		{"javascript form action", `<form action="javascript:steal()"></form>`, RuleJavaScriptURL, 1},
		{"javascript iframe", `<iframe src="javascript:alert(1)"></iframe>`, RuleJavaScriptURL, 1},
		{"base elsewhere", `<head><base href="https://cdn.example.com/"></head>`, RuleBase, 1},
		// A browser's reading of attributes and URLs, not patterns.
		{"meta refresh without a separator", `<meta http-equiv=refresh content="0 https://evil.example/">`, RuleMetaRefresh, 1},
		{"meta refresh upper case, url= after a space", `<META HTTP-EQUIV=REFRESH CONTENT="0 URL=https://evil.example/">`, RuleMetaRefresh, 1},
		{"meta refresh of a fraction", `<meta http-equiv="refresh" content=".5;url=//evil.example/">`, RuleMetaRefresh, 1},
		{"meta refresh scheme only", `<meta http-equiv="refresh" content="0; url=http:evil.example">`, RuleMetaRefresh, 1},
		{"password joined with form=", "<form id=f action=\"https://evil.example/c\"></form>\n<p><input type=password form=f>", RulePasswordForm, 1},
		{"password in a form on the origin joined to one elsewhere", "<form id=f action=\"https://evil.example/\"></form>\n<form action=\"/ok\"><input type=password form=\"f\"></form>", RulePasswordForm, 1},
		{"form= upper case", `<FORM ID="f" ACTION="HTTPS://EVIL.EXAMPLE/"></FORM><INPUT TYPE="PASSWORD" FORM="f">`, RulePasswordForm, 1},
		{"form= before the form", "<input type=password form=later>\n<form id=later action=\"//evil.example/\"></form>", RulePasswordForm, 2},
		{"formaction of a button joined with form=", "<form id=f action=\"/ok\"><input type=password></form>\n<button form=f formaction=\"https://evil.example/\">Go</button>", RulePasswordForm, 1},
		{"formaction of a submit input", `<form action=/ok><input type=password><input type=submit formaction="//evil.example/"></form>`, RulePasswordForm, 1},
		{"form nested in a form is ignored", `<form action="https://evil.example/"><form action="/ok"><input type=password></form></form>`, RulePasswordForm, 1},
		{"action scheme only", `<form action="http:evil.example/login"><input type=password></form>`, RulePasswordForm, 1},
		{"action scheme only, upper case, slashes", `<form action="HTTPS:/evil.example/login"><input type=password></form>`, RulePasswordForm, 1},
		{"action scheme and backslashes", `<form action="https:\\evil.example\login"><input type=password></form>`, RulePasswordForm, 1},
		{"action with a tab and entities", `<form action="ht&Tab;tps&colon;//evil.example/"><input type=password></form>`, RulePasswordForm, 1},
		{"base scheme only", `<base href="https:evil.example">`, RuleBase, 1},
		{"xlink:href in SVG", `<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`, RuleJavaScriptURL, 1},
		{"xlink:href upper case", `<SVG><A XLINK:HREF="JAVASCRIPT:alert(1)"><TEXT>x</TEXT></A></SVG>`, RuleJavaScriptURL, 1},
		{"href animated to javascript", `<svg><a><animate attributeName="href" values="#;javascript:alert(1)"/><text>x</text></a></svg>`, RuleJavaScriptURL, 1},
		{"xlink:href set to javascript", `<svg><a><set attributeName="xlink:href" to="javascript:alert(1)"/></a></svg>`, RuleJavaScriptURL, 1},
		{"javascript&colon;", `<a href="javascript&colon;alert(1)">x</a>`, RuleJavaScriptURL, 1},
		{"java&Tab;script", `<a href="java&Tab;script:alert(1)">x</a>`, RuleJavaScriptURL, 1},
		{"java&NewLine;script", `<a href="java&NewLine;script:alert(1)">x</a>`, RuleJavaScriptURL, 1},
		{"newline inside javascript", "<a href=\"java\nscript:alert(1)\">x</a>", RuleJavaScriptURL, 1},
		{"control characters before javascript", "<a href=\"\x01\x1f javascript:alert(1)\">x</a>", RuleJavaScriptURL, 1},
		{"javascript formaction on a button", `<form action="/ok"><button formaction="JavaScript:alert(1)">Go</button></form>`, RuleJavaScriptURL, 1},
		{"javascript in an embed", `<embed src="javascript:alert(1)">`, RuleJavaScriptURL, 1},
		// Fine:
		{"password joined with form= to a form on the origin", `<form id=f action="/ok"></form><input type=password form=f>`, "", 0},
		{"password outside the form elsewhere", `<form action="https://evil.example/"></form><input type=password>`, "", 0},
		{"relative refresh with a separator-less url", `<meta http-equiv="refresh" content="0 next.html">`, "", 0},
		{"scheme-like path", `<form action="login:here"><input type=password></form>`, "", 0},
		{"password form on the report's origin", `<form action="/login"><input type=password></form>`, "", 0},
		{"password form without action", `<form><input type=password></form>`, "", 0},
		{"form off origin without password", `<form action="https://search.example.com/"><input name=q></form>`, "", 0},
		{"plain link", `<a href="https://example.com/">x</a>`, "", 0},
		{"javascript in text", `<p>javascript: is a scheme</p><a href="/javascript:x">y</a>`, "", 0},
		{"relative refresh", `<meta http-equiv="refresh" content="30">`, "", 0},
		{"relative base", `<base href="sub/">`, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			found := unsafeHTML(File{Path: "index.html", Content: []byte(c.html)})
			if c.rule == "" {
				assert.Empty(t, found)
				return
			}
			require.Len(t, found, 1, "%+v", found)
			assert.Equal(t, c.rule, found[0].Rule)
			assert.Equal(t, c.line, found[0].Line)
			assert.Equal(t, Hold, found[0].Severity)
			assert.NotEmpty(t, found[0].Excerpt)
		})
	}
	// Only HTML and SVG files get the HTML checks: an SVG opened on its
	// own runs as a document.
	found, err := shared.Scan(context.Background(), []File{{Path: "notes.txt", Content: []byte(`<a href="javascript:x">`)}})
	require.NoError(t, err)
	assert.Empty(t, found)
	found, err = shared.Scan(context.Background(), []File{{Path: "img/logo.svg", Content: []byte(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">` + "\n" + `<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`)}})
	require.NoError(t, err)
	require.Len(t, found, 1)
	assert.Equal(t, Finding{Rule: RuleJavaScriptURL, File: "img/logo.svg", Line: 2, Excerpt: `<a xlink:href="javascript:alert(1)">`, Severity: Hold}, found[0])
	assert.Equal(t, Held, Outcome(found))
}

// TestEverySecretIsRedactedFromEveryExcerpt: beside the key id a rule
// finds, a secret no rule finds is masked in the excerpt too.
func TestEverySecretIsRedactedFromEveryExcerpt(t *testing.T) {
	keyID, secret := fakes[0].secret, rnd(12, 40, alnum)
	line := "<p>aws_access_key_id = " + keyID + "</p><p>aws_secret_access_key = " + secret + "</p>"
	found, err := shared.Scan(context.Background(), []File{{Path: "index.html", Content: []byte(line)}})
	require.NoError(t, err)
	require.NotEmpty(t, found)
	out, err := json.Marshal(found)
	require.NoError(t, err)
	assert.NotContains(t, string(out), keyID[4:])
	assert.NotContains(t, string(out), secret[4:])
}

func TestExcerptsAreShortAndRedacted(t *testing.T) {
	key := fakes[0].secret
	long := strings.Repeat("<td>1</td>", 5000) + "aws_access_key_id=" + key + strings.Repeat("<td>2</td>", 5000)
	found, err := shared.Scan(context.Background(), []File{{Path: "index.html", Content: []byte(long)}})
	require.NoError(t, err)
	require.NotEmpty(t, found)
	assert.LessOrEqual(t, len([]rune(found[0].Excerpt)), excerptWidth)
	assert.Contains(t, found[0].Excerpt, key[:4]+"…[REDACTED]")
	assert.NotContains(t, found[0].Excerpt, key[4:])
}

// report2MB is a realistic 2 MB report: tables, paragraphs, inline script
// and style.
func report2MB() []byte {
	var b bytes.Buffer
	b.WriteString("<!doctype html><html lang=en><head><title>Quarterly report</title><style>td{padding:4px}</style>" +
		"<script>const data = [1,2,3]; function draw(){ return data.map(x => x * 2) }</script></head><body>\n")
	for i := 0; b.Len() < 2<<20-200; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2>\n<p>Revenue grew by %d%% against the plan, driven by renewals in the north region and new accounts.</p>\n", i, i%17)
		b.WriteString("<table><tr><th scope=col>Region</th><th scope=col>Q1</th><th scope=col>Q2</th></tr>\n")
		for j := range 8 {
			fmt.Fprintf(&b, "<tr><td>Region %d</td><td>%d</td><td>%d</td></tr>\n", j, i*j, i+j)
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

func BenchmarkScan2MBHTML(b *testing.B) {
	page := report2MB()
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for range b.N {
		if _, err := shared.Scan(context.Background(), []File{{Path: "index.html", Content: page}}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScan500Files(b *testing.B) {
	page := report2MB()[:40<<10]
	files := make([]File, 500)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("p/%d.html", i), Content: page}
	}
	b.SetBytes(int64(len(page) * len(files)))
	b.ResetTimer()
	for range b.N {
		if _, err := shared.Scan(context.Background(), files); err != nil {
			b.Fatal(err)
		}
	}
}
