// Package publishscan scans every file of a report version before it can
// go live: for secrets with gitleaks' default rules, used as a library,
// and, in HTML and SVG, for content that would turn the report against its
// readers (a password form or a refresh to another origin, javascript:
// links, a <base> pointing elsewhere), read as a browser reads them.
//
// A finding either declines the version or holds it for an owner or
// administrator. Only secrets gitleaks recognises with high confidence
// decline: private keys, cloud provider keys and live tokens whose shape
// is their issuer's own (declining lists their rule ids). Anything less
// certain, such as a generic "api_key = …" assignment, holds, because a
// person can tell a placeholder from a key and the scan cannot.
//
// A secret is never returned in clear: every excerpt is redacted. An
// allow comment in the content exempts nothing, and neither does a file's
// name, since what is published is read by people, not built.
package publishscan

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
	"golang.org/x/net/html"
)

// File is one file of a version to scan.
type File struct {
	Path    string
	Content []byte
}

// Severities of a finding.
const (
	Decline = "decline"
	Hold    = "hold"
)

// Outcomes of a scan.
const (
	Live     = "live"
	Held     = "held"
	Declined = "declined"
)

// Finding is one thing the scan found; Excerpt never holds a secret in
// clear.
type Finding struct {
	Rule     string `json:"rule"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Excerpt  string `json:"excerpt"`
	Severity string `json:"severity"`
}

// declining are the gitleaks rules whose matches are secrets beyond
// doubt: their shape is their issuer's own (a fixed prefix, a checksum)
// or the key material itself. A test holds every id to the default
// configuration, so a renamed rule cannot silently stop declining.
var declining = []string{
	// Key material.
	"private-key", "age-secret-key",
	// Cloud providers.
	"aws-access-token", "aws-amazon-bedrock-api-key-long-lived", "gcp-api-key", "azure-ad-client-secret",
	"alibaba-access-key-id", "digitalocean-access-token", "digitalocean-pat", "digitalocean-refresh-token",
	"cloudflare-origin-ca-key", "flyio-access-token", "heroku-api-key-v2",
	// Source hosts and package registries.
	"github-pat", "github-fine-grained-pat", "github-oauth", "github-app-token", "github-refresh-token",
	"gitlab-pat", "gitlab-pat-routable", "gitlab-ptt", "gitlab-rrt", "gitlab-deploy-token",
	"gitlab-runner-authentication-token", "gitlab-runner-authentication-token-routable", "gitlab-scim-token",
	"npm-access-token", "pypi-upload-token", "rubygems-api-token",
	// Chat, payments, AI and SaaS tokens with their issuer's prefix.
	"slack-bot-token", "slack-user-token", "slack-app-token", "slack-config-access-token",
	"slack-config-refresh-token", "slack-webhook-url", "stripe-access-token", "square-access-token",
	"shopify-access-token", "shopify-custom-access-token", "shopify-private-app-access-token", "shopify-shared-secret",
	"openai-api-key", "anthropic-api-key", "anthropic-admin-api-key", "perplexity-api-key",
	"huggingface-access-token", "huggingface-organization-api-token", "sendgrid-api-token", "twilio-api-key",
	"hashicorp-tf-api-token", "vault-service-token", "vault-batch-token", "doppler-api-token",
	"databricks-api-token", "postman-api-token", "pulumi-api-token", "linear-api-key", "notion-api-token",
	"1password-secret-key", "1password-service-account-token", "grafana-cloud-api-token",
	"grafana-service-account-token", "sentry-org-token", "sentry-user-token", "planetscale-api-token",
	"planetscale-oauth-token", "planetscale-password", "dynatrace-api-token", "new-relic-user-api-key",
	"new-relic-insert-key",
}

// Scanner scans files; build one per process (loading the rules takes a
// while) and share it: it is safe for concurrent use.
type Scanner struct {
	detector *detect.Detector
}

var silence sync.Once

// New builds the scanner with gitleaks' default rules.
func New() (*Scanner, error) {
	// gitleaks logs through a global logger, and a debug line can carry
	// the secret: nothing of it is ever written.
	silence.Do(func() { logging.Logger = zerolog.Nop() })
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, fmt.Errorf("load gitleaks' rules: %w", err)
	}
	d.IgnoreGitleaksAllow = true // an allow comment in published content exempts nothing
	return &Scanner{detector: d}, nil
}

// Scan scans files and returns their findings sorted by file, line and
// rule.
func (s *Scanner) Scan(ctx context.Context, files []File) ([]Finding, error) {
	var out []Finding
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if binary(f.Content) {
			continue
		}
		ext := strings.ToLower(path.Ext(f.Path))
		found, secrets := s.secrets(ctx, f, markup[ext])
		if documents[ext] {
			found = append(found, unsafeHTML(f)...)
		}
		// An excerpt shows more of its line than its own finding: every
		// secret found in the file is redacted from every excerpt, and so
		// is any long token, which may be a secret no rule knows.
		for i := range found {
			found[i].Excerpt = clip(maskTokens(redact(found[i].Excerpt, secrets...)), excerptWidth)
		}
		out = append(out, found...)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return out, nil
}

// Outcome is what findings make of a version: declined when any declines,
// held when there is any other, else live.
func Outcome(findings []Finding) string {
	out := Live
	for _, f := range findings {
		if f.Severity == Decline {
			return Declined
		}
		out = Held
	}
	return out
}

// binary says whether content is not text: a NUL in its first 8 KB, as
// git decides. Images and fonts are not scanned.
func binary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0
}

// documents are the extensions of files that get the HTML checks: pages,
// and SVG images, which run as documents when opened on their own.
var documents = map[string]bool{".html": true, ".htm": true, ".svg": true}

// markup are the extensions of files read as markup: see textView.
var markup = map[string]bool{".html": true, ".htm": true, ".xhtml": true, ".svg": true, ".xml": true}

// textView is markup as gitleaks can read it. Its rules expect a secret
// to end at a quote, a space or a line's end, so `<code>sk_live_…</code>`
// would pass: tags' brackets become spaces, and entities are decoded
// (`&quot;`), keeping every line where it was.
func textView(content []byte) string {
	return html.UnescapeString(brackets.Replace(string(content)))
}

var brackets = strings.NewReplacer("<", " ", ">", " ")

// secrets runs gitleaks over one file, markup through its text view. The
// file's path is not given to gitleaks, so no path allowlist of its
// configuration exempts a file.
// It returns the findings, their excerpts not yet redacted, and the
// secrets found.
func (s *Scanner) secrets(ctx context.Context, f File, isMarkup bool) ([]Finding, []string) {
	text := string(f.Content)
	if isMarkup {
		text = textView(f.Content)
	}
	//lint:ignore SA1019 gitleaks v8 scans one text with a context only through detect.Fragment; v9 replaces it with sources.Fragment
	found := s.detector.DetectContext(ctx, detect.Fragment{Raw: text})
	out := make([]Finding, 0, len(found))
	var secrets []string
	for _, x := range found {
		sev := Hold
		if slices.Contains(declining, x.RuleID) {
			sev = Decline
		}
		out = append(out, Finding{Rule: x.RuleID, File: f.Path, Line: x.StartLine + 1, Excerpt: excerpt(x), Severity: sev})
		secrets = append(secrets, x.Secret, x.Match)
	}
	return out, secrets
}

// excerptWidth bounds an excerpt, in characters.
const excerptWidth = 160

// excerpt is the finding's line around the match, its own secret
// redacted (Scan redacts the file's other secrets).
func excerpt(x report.Finding) string {
	line := x.Line
	if i := strings.Index(line, firstLine(x.Match)); i >= 0 && len(line) > 4*excerptWidth {
		// A minified file is one long line: keep the part around the match.
		line = line[max(0, i-excerptWidth):min(len(line), i+len(x.Match)+excerptWidth)]
	}
	return redact(strings.TrimSpace(line), x.Secret, x.Match)
}

// redact replaces every line of each secret with its first four
// characters and a mark.
func redact(s string, secrets ...string) string {
	for _, secret := range secrets {
		for _, part := range strings.Split(secret, "\n") {
			part = strings.TrimSpace(part)
			if len(part) <= 4 {
				continue
			}
			keep := part[:4]
			if !utf8.ValidString(keep) {
				keep = ""
			}
			s = strings.ReplaceAll(s, part, keep+"…[REDACTED]")
		}
	}
	return s
}

// longToken is a run of characters secrets are made of, long enough to be
// one: a key, a token, a hash (one with letters and digits both).
var longToken = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}`)

// maskTokens redacts every long token of s that mixes letters and digits
// but for its first four characters; words and names stay.
func maskTokens(s string) string {
	return longToken.ReplaceAllStringFunc(s, func(tok string) string {
		if !strings.ContainsAny(tok, "0123456789") || strings.IndexFunc(tok, unicode.IsLetter) < 0 {
			return tok
		}
		return tok[:4] + "…[REDACTED]"
	})
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// clip shortens s to at most n characters, around its middle when the
// redaction mark is there.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	at := strings.Index(s, "[REDACTED]")
	if at < 0 {
		return string(r[:n-1]) + "…"
	}
	mid := utf8.RuneCountInString(s[:at])
	from := max(0, min(mid-n/2, len(r)-n))
	return "…" + string(r[from+1:from+n-1]) + "…"
}
