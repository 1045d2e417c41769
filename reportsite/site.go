// Package reportsite serves published reports, each from an origin of its
// own (`<report key>.<reports domain>`), never the app's: a report's HTML
// is written by an agent and untrusted, so it must not reach the app's
// session, another report, or data its reader may not see. Readers come
// in through the app, which checks who they are and hands the report's
// host a single-use ticket; the host keeps its own cookie and checks the
// reader's grant on every request.
package reportsite

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/tracing"
	"github.com/assent-hq/assent/reports"
)

// Deps are what the site needs.
type Deps struct {
	// Reports answers what a report's origin asks (reports/hosting.go).
	Reports *reports.Service
	Blobs   *blobstore.Store
	// AppURL is the app's public address (the base URL).
	AppURL string
	// Domain is the reports domain: each report is served at
	// <key>.<Domain>, with a port when Domain has one.
	Domain string
	Logger *slog.Logger
	// Metrics counts the hosts' requests as the app's are (nil: none).
	Metrics *metrics.Metrics
}

// Site serves every report host. Create it with New; Route puts it in
// front of the app.
type Site struct {
	reports   *reports.Service
	blobs     *blobstore.Store
	log       *slog.Logger
	metrics   *metrics.Metrics
	appURL    string
	appOrigin string
	// appHostPort is the app's host as requests name it.
	appHostPort string
	scheme      string
	domain      string
	// secure marks the reader cookie Secure and names it __Host-…
	secure bool
	// sameSite is Lax when reports share the app's site, else None: the
	// app frames a report, and a cross-site frame gets no Lax cookie.
	sameSite http.SameSite
	// selectJS is the selection script, naming the app's origin.
	selectJS []byte
	// tagAt is where each page's selection tag goes, by its sum.
	tagAt tagOffsets
}

// ReaderCookie holds a reader session on one report's host.
const ReaderCookie = "assent_reader"

// New returns the site, or an error naming the setting at fault.
func New(d Deps) (*Site, error) {
	app, err := url.Parse(strings.TrimSuffix(d.AppURL, "/"))
	if err != nil || app.Host == "" {
		return nil, fmt.Errorf("reports: the base URL %q is not an absolute URL", d.AppURL)
	}
	domain := strings.ToLower(strings.Trim(d.Domain, "."))
	if domain == "" || strings.ContainsAny(domain, "/@*") {
		return nil, fmt.Errorf("reports: ASSENT_REPORTS_DOMAIN %q is not a host name (such as reports.example.com)", d.Domain)
	}
	// Every host under the domain is a report host; the app may be the
	// domain itself (localhost:8080 beside <key>.localhost:8080), whose
	// host-only cookies no report host receives.
	if strings.HasSuffix(strings.ToLower(app.Host), "."+domain) {
		return nil, fmt.Errorf("reports: the app (%s) must not be served under the reports domain %s", app.Host, domain)
	}
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Site{reports: d.Reports, blobs: d.Blobs, log: log, metrics: d.Metrics, appURL: app.String(), appHostPort: strings.ToLower(app.Host),
		appOrigin: app.Scheme + "://" + app.Host, scheme: app.Scheme, domain: domain, secure: app.Scheme == "https",
		sameSite: http.SameSiteNoneMode}
	s.selectJS = selectScriptFor(s.appOrigin)
	if sameSite(app.Hostname(), hostOnly(domain)) {
		s.sameSite = http.SameSiteLaxMode
	}
	return s, nil
}

// sameSite reports whether hosts a and b belong to one registrable domain
// (app.example.com and x.reports.example.com do; localhost and IP
// addresses are sites of their own).
func sameSite(a, b string) bool {
	if net.ParseIP(a) != nil || net.ParseIP(b) != nil {
		return false
	}
	sa, errA := publicsuffix.EffectiveTLDPlusOne(a)
	sb, errB := publicsuffix.EffectiveTLDPlusOne("x." + b)
	return errA == nil && errB == nil && sa == sb
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// Origin is the origin report key is served from.
func (s *Site) Origin(key string) string { return s.scheme + "://" + key + "." + s.domain }

// FrameSource is the CSP source that matches every report's origin.
func (s *Site) FrameSource() string { return s.scheme + "://*." + s.domain }

// EnterURL is where a reader's browser trades ticket for the host's own
// cookie and then opens next.
func (s *Site) EnterURL(key, ticket, next string) string {
	return s.Origin(key) + paths.ReportEnter + "?" + url.Values{"ticket": {ticket}, "next": {next}}.Encode()
}

// keyOf is the report key a request's host names, when it is a report
// host: any name under the reports domain is one, and never the app.
func (s *Site) keyOf(host string) (string, bool) {
	host = strings.ToLower(host)
	if !strings.Contains(s.domain, ":") {
		host = hostOnly(host)
	}
	key, ok := strings.CutSuffix(host, "."+s.domain)
	if !ok || key == "" {
		return "", false
	}
	return key, true
}

// Route sends requests for report hosts to the site and every other
// request to app; a nil site (reports not readable) sends all to app.
func (s *Site) Route(app http.Handler) http.Handler {
	if s == nil {
		return app
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key, ok := s.keyOf(r.Host); ok {
			s.observed(w, r, key)
			return
		}
		if !s.appHost(r.Host) && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			// Another name for this server (an IP address, a rebinding
			// domain) is not the app: its cookies and links name one host.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusMisdirectedRequest)
			_, _ = fmt.Fprintf(w, "This server answers as %s; open that address instead. (A proxy in front must pass the Host header on.)\n", s.appURL)
			return
		}
		app.ServeHTTP(w, r)
	})
}

// observed serves a report host's request, counted in the metrics and
// traced as the app's requests are, under its route's template (hostRoute),
// so neither a report's key nor its paths become label values.
func (s *Site) observed(w http.ResponseWriter, r *http.Request, key string) {
	start, route := time.Now(), hostRoute(r.URL.Path)
	r, end := tracing.Server(r, route)
	sw := &statusWriter{ResponseWriter: w}
	s.serve(sw, r, key)
	status := sw.answered()
	end(status)
	s.metrics.HTTPRequest(route, r.Method, status, time.Since(start))
}

// hostRoute is the template of a report host's path, as the metrics and
// traces name it.
func hostRoute(p string) string {
	const host = "<report>"
	switch at, known := parseTarget(p); {
	case p == paths.ReportEnter || p == paths.ReportSelectScript:
		return host + p
	case !known:
		return host + paths.ReportVersions + ":n"
	case at.version != 0 && strings.HasPrefix(at.path, paths.ReportData):
		return host + paths.ReportVersions + ":n" + paths.ReportData + ":name"
	case at.version != 0:
		return host + paths.ReportVersions + ":n/*path"
	case strings.HasPrefix(at.path, paths.ReportData):
		return host + paths.ReportData + ":name"
	}
	return host + "/*path"
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// answered is the status sent: 200 when the handler wrote nothing.
func (w *statusWriter) answered() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// appHost reports whether host names the app, its scheme's default port
// written or not. Health checks answer on any host.
func (s *Site) appHost(host string) bool {
	host = strings.ToLower(host)
	if host == s.appHostPort {
		return true
	}
	h, port, err := net.SplitHostPort(host)
	return err == nil && h == s.appHostPort && ((s.scheme == "https" && port == "443") || (s.scheme == "http" && port == "80"))
}

// reportPolicy confines a report to its own origin and the others its
// organisation allows (the organisation's ReportOrigins, checked by the
// admin service to be bare origins): its scripts, styles, images and
// fonts load from there (or inline, data: and blob:), and it fetches,
// beacons, opens sockets and posts forms only there, so a hostile version
// cannot send what it reads (earlier versions, datasets) elsewhere. A
// sandbox keeps it off the app's origin and the top window.
func reportPolicy(appOrigin string, allowed []string) string {
	self := strings.Join(append([]string{"'self'"}, allowed...), " ")
	return strings.Join([]string{
		"sandbox allow-scripts allow-same-origin allow-forms allow-popups allow-downloads",
		"default-src " + self + " data: blob:",
		"script-src " + self + " 'unsafe-inline' 'unsafe-eval' data: blob:",
		"style-src " + self + " 'unsafe-inline' data: blob:",
		"connect-src " + self,
		"form-action 'self'",
		"base-uri 'none'",
		"frame-ancestors " + appOrigin,
	}, "; ")
}

// secureHeaders go on every response of a report host: the document is
// sandboxed (its own origin still, so it can read its _data) and kept to
// its origin, framed only by the app, sends no referrer, and nothing is
// sniffed. A report's own responses widen the policy by its
// organisation's origins (allowOrigins).
func (s *Site) secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", reportPolicy(s.appOrigin, nil))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-site")
}

// allowOrigins widens the policy of a report's responses by the origins
// its organisation allows.
func (s *Site) allowOrigins(h http.Header, origins []string) {
	if len(origins) > 0 {
		h.Set("Content-Security-Policy", reportPolicy(s.appOrigin, origins))
	}
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request, key string) {
	s.secureHeaders(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.page(w, http.StatusMethodNotAllowed, "Not allowed", "A report only answers GET and HEAD.", "")
		return
	}
	if crossSiteSubresource(r) {
		s.page(w, http.StatusForbidden, "Not here", "A report's files are read by the report itself, not by other pages.", "")
		return
	}
	ctx := r.Context()
	rep, origins, err := s.reports.Hosted(ctx, key)
	if apperr.Is(err, apperr.NotFound) {
		s.page(w, http.StatusNotFound, "No such report", "Nothing is published at this address.", "")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if r.URL.Path == paths.ReportEnter {
		s.enter(w, r, rep)
		return
	}
	if rep.Archived {
		s.page(w, http.StatusGone, "This report was archived", "Its owner archived it; it is no longer served.", "")
		return
	}
	s.allowOrigins(w.Header(), origins)
	reader, err := s.reader(r, rep)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ok, err := s.reports.MayRead(ctx, rep, reader)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	at, known := parseTarget(r.URL.Path)
	data := strings.HasPrefix(at.path, paths.ReportData)
	switch {
	case ok:
	case data:
		writeJSONError(w, http.StatusForbidden, "you may not read this report")
		return
	case reader == nil:
		// Not signed in here yet: the app finds out who this is.
		http.Redirect(w, r, s.appURL+paths.Reader(rep.Key, r.URL.RequestURI()), http.StatusSeeOther)
		return
	default:
		s.page(w, http.StatusForbidden, "You cannot read this report",
			"It is not shared with you, or no longer. You can ask its owner for access.", s.appURL+paths.Reader(rep.Key, "/"))
		return
	}
	switch {
	case r.URL.Path == paths.ReportSelectScript:
		s.selectScript(w, r)
		return
	case !known:
		s.page(w, http.StatusNotFound, "No such version", "This report has no published version at this address.", "")
		return
	case at.path == "":
		// A version's root without its slash: its pages' relative links
		// need it.
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	v, err := s.version(ctx, rep, at.version)
	if apperr.Is(err, apperr.NotFound) || apperr.Is(err, apperr.InvalidState) {
		if at.version == 0 {
			s.page(w, http.StatusNotFound, "Nothing published yet", "This report has no live version yet.", "")
		} else {
			s.page(w, http.StatusNotFound, "No such version", fmt.Sprintf("This report has no published version %d.", at.version), "")
		}
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if data {
		// Datasets are not versioned: every version reads the current one.
		s.dataset(w, r, rep, strings.TrimPrefix(at.path, paths.ReportData))
		return
	}
	s.file(w, r, rep, reader, v, at.path)
}

// target is what a request's path names on a report's origin: a path in
// the live version (version 0), or, under /_assent/v/<n>/, in version n.
type target struct {
	version int
	// path is the path within the version, "" for a version's root
	// named without its slash.
	path string
}

// parseTarget reads a request's path; a version number that is not one
// (0, 01, x) names nothing.
func parseTarget(p string) (target, bool) {
	rest, pinned := strings.CutPrefix(p, paths.ReportVersions)
	if !pinned {
		return target{path: p}, true
	}
	num, tail, slash := strings.Cut(rest, "/")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || strconv.Itoa(n) != num {
		return target{}, false
	}
	if !slash {
		return target{version: n}, true
	}
	return target{version: n, path: "/" + tail}, true
}

// version is the version a request reads: the live one (n is 0), or
// version n if it was published (never one held or declined).
func (s *Site) version(ctx context.Context, rep *reports.Report, n int) (*reports.Version, error) {
	return s.reports.Served(ctx, rep, n)
}

// crossSiteSubresource reports a request another origin's page makes for
// a file (a script, a stylesheet, a fetch), by Fetch Metadata. Report hosts
// share a site in production, and Cross-Origin-Resource-Policy: same-site
// alone would let a sibling report load this one's scripts with the
// reader's cookie. Navigations (the app's frame, links, the handshake)
// pass; a browser that sends no Fetch Metadata is not refused.
func crossSiteSubresource(r *http.Request) bool {
	site := r.Header.Get("Sec-Fetch-Site")
	return site != "" && site != "same-origin" && site != "none" && r.Header.Get("Sec-Fetch-Mode") != "navigate"
}

// reader is who the host's cookie signs in, or nil.
func (s *Site) reader(r *http.Request, rep *reports.Report) (*accounts.Person, error) {
	c, err := r.Cookie(s.cookieName())
	if err != nil {
		return nil, nil
	}
	return s.reports.Reader(r.Context(), c.Value, rep.ID)
}

// enter trades the app's ticket for this host's own cookie, once, and
// opens the page the reader asked for.
func (s *Site) enter(w http.ResponseWriter, r *http.Request, rep *reports.Report) {
	next := r.URL.Query().Get("next")
	if !paths.Local(next) || strings.HasPrefix(next, paths.ReportEnter) {
		next = "/"
	}
	token, err := s.reports.RedeemTicket(r.Context(), r.URL.Query().Get("ticket"), rep.ID)
	if errors.Is(err, reports.ErrReaderTicketInvalid) {
		// A used or stale ticket (a reload, a shared address): start over
		// from the app, which issues a fresh one.
		http.Redirect(w, r, s.appURL+paths.Reader(rep.Key, next), http.StatusSeeOther)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// Across sites (the app on another site frames the report) the cookie
	// is SameSite=None, Secure (browsers take that from localhost too) and
	// partitioned: kept for the app's frame alone, where browsers that
	// block third-party cookies still allow it.
	cross := s.sameSite == http.SameSiteNoneMode
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: token, Path: "/", HttpOnly: true,
		Secure: s.secure || cross, SameSite: s.sameSite, Partitioned: cross})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// cookieName carries the __Host- prefix over https: the cookie then
// belongs to this very host, set Secure with Path=/ and no Domain.
func (s *Site) cookieName() string {
	if s.secure {
		return "__Host-" + ReaderCookie
	}
	return ReaderCookie
}

// dataset serves one of the report's datasets as stored.
func (s *Site) dataset(w http.ResponseWriter, r *http.Request, rep *reports.Report, name string) {
	d, err := s.reports.HostedDataset(r.Context(), rep, name)
	if apperr.Is(err, apperr.NotFound) {
		writeJSONError(w, http.StatusNotFound, "no dataset named "+name)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(d.Data)
	}
}

// file serves the file at p in version v; an HTML page opened is a view
// of v, and carries our selection script.
func (s *Site) file(w http.ResponseWriter, r *http.Request, rep *reports.Report, reader *accounts.Person, v *reports.Version, p string) {
	ctx := r.Context()
	name := strings.TrimPrefix(path.Clean("/"+p), "/")
	if name == "" || strings.HasSuffix(p, "/") {
		name = path.Join(name, "index.html")
	}
	var f *reports.ManifestFile
	for i := range v.Files.V {
		if v.Files.V[i].Path == name {
			f = &v.Files.V[i]
		}
	}
	if f == nil {
		s.page(w, http.StatusNotFound, "Not found", "This report has no file "+name+".", "")
		return
	}
	h := w.Header()
	ctype := contentType(name)
	html := ctype == htmlType
	h.Set("Content-Type", ctype)
	// Every request comes back here, so the grant is checked each time.
	h.Set("Cache-Control", "private, no-cache")
	// Files are content-addressed, so the sum is a strong validator.
	etag := `"` + f.SHA256 + `"`
	tag := ""
	if html {
		// What is served is the file and our tag.
		etag = `"` + f.SHA256 + "-" + selectTagSum + `"`
		tag = selectTag
	}
	h.Set("ETag", etag)
	if html && r.Method == http.MethodGet {
		if err := s.reports.RecordView(ctx, rep, v.Version, reader); err != nil {
			s.log.ErrorContext(ctx, "report view not recorded", "report", rep.ID, "error", err)
		}
	}
	// Streamed from the blob store, never held whole: ranges, HEAD and
	// If-None-Match are ServeContent's; a page's ranges count its tag.
	content := newServed(f.Size, tag, func() (io.ReadSeekCloser, int64, error) {
		return s.openFile(ctx, f, html)
	})
	defer content.Close()
	if r.Method == http.MethodGet && !etagListed(r.Header.Get("If-None-Match"), etag) {
		// Opened now, so a failure is still a 500 and not a cut-off 200.
		if err := content.prepare(); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	http.ServeContent(w, r, name, time.Time{}, content)
	if err := content.err; err != nil && !errors.Is(err, context.Canceled) {
		s.log.WarnContext(ctx, "report file not sent whole", "report", rep.ID, "file", name, "error", err)
	}
}

// openFile opens file f from the blob store and says where a page's
// selection tag goes (0 for other files).
func (s *Site) openFile(ctx context.Context, f *reports.ManifestFile, html bool) (io.ReadSeekCloser, int64, error) {
	blob, err := s.blobs.Open(ctx, f.SHA256)
	if err != nil || !html {
		return blob, 0, err
	}
	at, ok := s.tagAt.get(f.SHA256)
	if !ok {
		if at, err = selectTagOffset(blob); err != nil {
			_ = blob.Close()
			return nil, 0, err
		}
		s.tagAt.put(f.SHA256, at)
	}
	return blob, at, nil
}

// etagListed reports whether an If-None-Match header names etag (or is
// *), as ServeContent's weak comparison would.
func etagListed(header, etag string) bool {
	if strings.TrimSpace(header) == "*" {
		return true
	}
	for _, t := range strings.Split(header, ",") {
		if t = strings.TrimPrefix(strings.TrimSpace(t), "W/"); t == etag {
			return true
		}
	}
	return false
}

func (s *Site) fail(w http.ResponseWriter, r *http.Request, err error) {
	// The host names the report; no path or query is logged (docs/decisions.md, Logs).
	s.log.ErrorContext(r.Context(), "report host failed", "host", r.Host, "error", err)
	s.page(w, http.StatusInternalServerError, "Something went wrong", "It has been logged. Try again in a moment.", "")
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":{"message":%q}}`, msg)
}

// plainPage is the host's own page for what is not the report: plain,
// without script or style from elsewhere.
var plainPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<main><h1>{{.Title}}</h1><p>{{.Message}}</p>
{{if .Action}}<p><a href="{{.Action}}" target="_blank" rel="noopener" style="display: inline-block; padding: .5rem 1rem; border: 1px solid; border-radius: .25rem">Request access</a></p>{{end}}
</main></body></html>`))

func (s *Site) page(w http.ResponseWriter, status int, title, message, action string) {
	w.Header().Set("Content-Type", htmlType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = plainPage.Execute(w, struct{ Title, Message, Action string }{title, message, action})
}
