// Package web is the person's side of Assent: server-rendered pages for
// signing in and for the requests waiting on someone. The pages share the
// API's gin engine and binary; they need no JavaScript (the review page's
// script only fills in a quote, the inbox's only offers push
// notifications). Templates, the stylesheet and the scripts are embedded,
// so the binary is all there is to deploy.
package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/bodyread"
	"github.com/assent-hq/assent/internal/buildinfo"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/internal/wiring"
	"github.com/assent-hq/assent/push"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/webhooks"
)

//go:embed templates static
var files embed.FS

// Deps are what the pages need.
type Deps struct {
	// Mailer sends sign-in links. Nil means the process cannot send email:
	// sign-in answers as usual and logs an error for the operator.
	Mailer mail.Sender
	// BaseURL is the public address; emailed links start with it, and an
	// http:// address (dev) lets cookies go without the Secure flag.
	BaseURL string
	Logger  *slog.Logger
	// Services are the domain services the pages call, shared with the
	// API (app.Build); New panics when one is missing.
	Services Services
	// Site is where reports are served, each on its own origin
	// (reportsite.Site); nil when reports cannot be read (no reports
	// domain).
	Site ReportHosts
	// OIDC, when set, offers single sign-on beside the emailed link.
	OIDC *OIDCSettings
	// Codec, when set, serves the Temporal UI's codec endpoint.
	Codec *CodecSettings
	// SigningKey (32 bytes) signs the pre-session CSRF token. Nil makes a
	// random key per process: tokens then hold only in this process, so
	// instances that share visitors need the same key.
	SigningKey []byte
	// Dev, set by `assent dev` only, points a newcomer at what dev has
	// instead of real email and real people.
	Dev *DevSettings
}

// ReportHosts are the addresses of the report hosts, which the pages frame
// and send readers to.
type ReportHosts interface {
	// Origin is the origin of the report with key.
	Origin(key string) string
	// FrameSource is the CSP source that matches every report's origin.
	FrameSource() string
	// EnterURL is where a reader's browser trades ticket for the host's
	// own cookie and then opens next.
	EnterURL(key, ticket, next string) string
}

// DevSettings are what the pages show only in `assent dev`.
type DevSettings struct {
	// Mailbox is the dev mailbox's path, linked from "check your email".
	Mailbox string
	// People are the demo people's addresses, offered on the sign-in page.
	People []string
}

// signingKeySize is the size of Deps.SigningKey: HMAC-SHA256's full
// strength.
const signingKeySize = 32

// Services are the domain services the pages call.
type Services struct {
	Accounts    *accounts.Service
	Push        *push.Service
	History     *requests.History
	Comments    *comments.Service
	Reports     *reports.Service
	Webhooks    *webhooks.Service
	Admin       *admin.Service
	Slack       SlackSettings
	Gate        *gate.Service
	Delegations *delegations.Service
	// Kinds are the request kinds' own pages, each in its kind's folder.
	Kinds []KindPage
}

// Pages serves the web pages. Create it with New and add it to an engine
// with Mount.
type Pages struct {
	accounts *accounts.Service
	push     *push.Service
	settled  *requests.History
	comments *comments.Service
	reports  *reports.Service
	site     ReportHosts
	mailer   mail.Sender
	baseURL  string
	log      *slog.Logger
	// secure marks cookies Secure, and names them __Host-…; off only for
	// an http:// base URL.
	secure bool
	// signingKey signs the pre-session CSRF token.
	signingKey []byte
	pages      map[string]*template.Template
	// sending tracks emails still going out after their response.
	sending sync.WaitGroup
	// oidc is single sign-on, nil when not configured.
	oidc *oidcSignIn
	// signIns limits sign-in requests per client address.
	signIns  *ratelimit.Keyed
	webhooks *webhooks.Service
	admin    *admin.Service
	slack    SlackSettings
	gate     *gate.Service
	// delegations are members' delegations while away (settings.go).
	delegations *delegations.Service
	// codec is the Temporal UI's codec endpoint, nil when not served.
	codec *CodecSettings
	// dev is nil outside `assent dev`.
	dev *DevSettings
	// kinds are the request kinds' own pages; threadsPage is the one among
	// them that shows comment threads.
	kinds       []KindPage
	threadsPage ThreadsPage
}

// View is what every page template sees: the layout reads Person and CSRF,
// the page reads Page.
type View struct {
	// Person is who is signed in, or nil.
	Person *accounts.Person
	// CSRF is the token every form carries in its "csrf" field.
	CSRF string
	// Stylesheet is the stylesheet's address, versioned by its content;
	// Icon the icon's.
	Stylesheet, Icon string
	// Version is the server's, shown in the footer.
	Version string
	// Page is the page's own data.
	Page any
}

// hashedAsset is an embedded file served at a path that changes with its
// content, so browsers may cache it for good.
type hashedAsset struct {
	path string
	body []byte
}

// newHashedAsset reads static/<name>.<ext> and serves it at
// /assets/<name>-<hash>.<ext>.
func newHashedAsset(name, ext string) hashedAsset {
	b, err := files.ReadFile("static/" + name + "." + ext)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hashedAsset{"/assets/" + name + "-" + hex.EncodeToString(sum[:6]) + "." + ext, b}
}

// stylesheet is the pages' one stylesheet.
var stylesheet = newHashedAsset("style", "css")

// New parses the embedded templates; a template that does not parse is a
// programming error and panics at start, not at a person's first visit.
func New(d Deps) *Pages {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	wiring.Require("web", d.Services)
	svc := d.Services
	p := &Pages{accounts: svc.Accounts, push: svc.Push, settled: svc.History, comments: svc.Comments,
		reports: svc.Reports, site: d.Site, webhooks: svc.Webhooks, admin: svc.Admin, slack: svc.Slack, gate: svc.Gate, delegations: svc.Delegations,
		mailer: d.Mailer, baseURL: strings.TrimSuffix(d.BaseURL, "/"), log: log,
		secure: !strings.HasPrefix(d.BaseURL, "http://"), pages: map[string]*template.Template{}}
	if p.mailer == nil {
		p.mailer = noMailer{}
	}
	p.signingKey = signingKey(d.SigningKey)
	p.oidc = newOIDC(d.OIDC, p.baseURL)
	p.codec = d.Codec
	p.dev = d.Dev
	p.signIns = ratelimit.New(signInEvery, signInBurst)
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html"))
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, file := range names {
		name := strings.TrimSuffix(path.Base(file), ".html")
		if name == "layout" || name == "thread_parts" {
			continue
		}
		with := []string{file}
		if threadPages[name] {
			with = append(with, threadParts)
		}
		p.pages[name] = template.Must(template.Must(layout.Clone()).ParseFS(files, with...))
	}
	p.kinds = svc.Kinds
	// A kind's page may show comment threads (the review's does): each is
	// parsed over the layout with the threads' parts, parsed once.
	withThreads := template.Must(template.Must(layout.Clone()).ParseFS(files, threadParts))
	for _, k := range p.kinds {
		if t, ok := k.(ThreadsPage); ok {
			p.threadsPage = t
		}
		names, err := fs.Glob(k.Templates(), "*.html")
		if err != nil {
			panic(err)
		}
		for _, file := range names {
			name := strings.TrimSuffix(file, ".html")
			if p.pages[name] != nil {
				panic("web: two pages are named " + name)
			}
			p.pages[name] = template.Must(template.Must(withThreads.Clone()).ParseFS(k.Templates(), file))
		}
	}
	return p
}

// signingKey is key, or a random key when key is nil. A key of another
// size is a programming error and panics at start.
func signingKey(key []byte) []byte {
	if key == nil {
		key = make([]byte, signingKeySize)
		_, _ = rand.Read(key) // crypto/rand.Read never fails on supported platforms
	}
	if len(key) != signingKeySize {
		panic(fmt.Sprintf("web: SigningKey must be %d bytes, not %d", signingKeySize, len(key)))
	}
	return bytes.Clone(key)
}

// Mount adds the pages to r. Page routes live here, in one table.
func (p *Pages) Mount(r *gin.Engine) {
	r.GET(stylesheet.path, serveStylesheet)
	r.GET(icon.path, serveIcon)
	r.GET("/favicon.ico", serveFavicon)
	r.GET("/static/review.js", serveScript("review.js"))
	r.GET("/static/push.js", serveScript("push.js"))
	r.GET(pushWorkerPath, servePushWorker())

	g := p.Group(r)
	g.GET("/", p.home)
	g.GET("/signin", p.signInForm)
	g.POST("/signin", p.sendSignInLink)
	g.GET("/signin/link", p.confirmSignIn)
	g.POST("/signin/link", p.signIn)
	g.POST("/signout", p.signOut)
	g.GET("/inbox", RequireSignIn, p.inbox)
	g.GET("/history", RequireSignIn, p.history)
	g.GET("/settings", RequireSignIn, p.settings)
	g.POST("/settings/delegation", RequireSignIn, p.setDelegation)
	g.POST("/settings/delegation/end", RequireSignIn, p.endDelegation)
	g.POST("/settings/tokens", RequireSignIn, p.mintToken)
	g.POST("/settings/tokens/:id/revoke", RequireSignIn, p.revokeOwnToken)
	g.GET(paths.MandatesPage, RequireSignIn, p.mandates)
	g.POST(paths.MandatesPage+"/:id/revoke", RequireSignIn, p.revokeMandate)
	g.POST("/push/subscriptions", RequireSignIn, p.subscribePush)
	g.POST("/push/subscriptions/delete", RequireSignIn, p.unsubscribePush)
	g.POST("/push/subscriptions/status", RequireSignIn, p.pushStatus)
	for _, k := range p.kinds {
		k.Mount(g, p)
	}
	g.POST("/comments", RequireSignIn, p.postComment)
	g.POST("/comments/:id/resolve", RequireSignIn, p.resolveThread)
	g.GET("/comment-images/:report/:sha", RequireSignIn, p.commentImage)
	g.GET("/reports", RequireSignIn, p.reading, p.reportsList)
	g.GET(paths.ReportPage, p.publicReport, RequireSignIn, p.reading, p.report)
	g.POST(paths.ReportPage, RequireSignIn, p.reading, p.report)
	g.GET(paths.ReaderPage, RequireSignIn, p.reading, p.openReport)
	g.POST(paths.ReaderPage+"/access", RequireSignIn, p.reading, p.requestAccess)
	p.mountAdmin(g)
	p.mountOIDC(g)
	p.mountCodec(r)
}

// Group returns a route group whose pages know who is signed in and
// whose forms are checked for their CSRF token. Every page route belongs
// in one.
func (p *Pages) Group(r gin.IRouter) *gin.RouterGroup {
	return r.Group("/", pageHeaders, limitForms, plainForms, p.loadSession, p.CSRF)
}

// plainForms refuses a form field, query or path parameter no column can
// hold (a NUL character, bytes that are not UTF-8), as the API does.
func plainForms(c *gin.Context) {
	_ = c.Request.ParseMultipartForm(32 << 20) // as gin parses; handlers meet any error as before
	fields := []map[string][]string{c.Request.Form}
	if c.Request.MultipartForm != nil {
		fields = append(fields, c.Request.MultipartForm.Value)
	}
	for _, p := range c.Params {
		fields = append(fields, map[string][]string{p.Key: {p.Value}})
	}
	for _, f := range fields {
		for k, vs := range f {
			bad := validate.Text(k, k) != nil
			for _, v := range vs {
				bad = bad || validate.Text(k, v) != nil
			}
			if bad {
				name := strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "")
				c.Data(http.StatusBadRequest, "text/plain; charset=utf-8", []byte(fmt.Sprintf(
					"The field %q holds a character that cannot be kept (a NUL character, or bytes that are not text). Remove it and try again.", name)))
				c.Abort()
				return
			}
		}
	}
	c.Next()
}

// maxFormBytes bounds a form post; a person's longest input is a note or
// a corrected field.
const maxFormBytes = 1 << 20

// limitForms bounds a form post's size and the time it takes to arrive
// (pages do not long-poll, so the deadline holds for the whole request).
func limitForms(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxFormBytes)
	if c.Request.Method == http.MethodPost {
		defer bodyread.Bound(c.Writer)()
	}
	c.Next()
}

// pageHeaders keep pages out of frames and caches and off other origins:
// no script runs (but the review page's and the inbox's own), forms post
// only here, and nothing personal is cached.
func pageHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", pagePolicy())
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	c.Next()
}

// pagePolicy is every page's Content-Security-Policy, with the directives
// a page adds: a frame-src to frame reports, a script-src for the one page
// with a script of ours.
func pagePolicy(extra ...string) string {
	return strings.Join(slices.Concat([]string{"default-src 'none'", "style-src 'self'", "img-src 'self' data:", "form-action 'self'"},
		extra, []string{"frame-ancestors 'none'", "base-uri 'none'"}), "; ")
}

func serveStylesheet(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "text/css; charset=utf-8", stylesheet.body)
}

// serveScript serves the static script name, for the pages that allow
// scripts of ours. Its address does not change with it, so it is kept
// only a little.
func serveScript(name string) gin.HandlerFunc {
	body, err := files.ReadFile("static/" + name)
	if err != nil {
		panic(err)
	}
	return func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Data(http.StatusOK, "text/javascript; charset=utf-8", body)
	}
}

// Render writes the page template name inside the layout, with the
// signed-in person and the CSRF token filled in. The page is rendered in
// full before anything is sent, so a template error is a clean 500.
func (p *Pages) Render(c *gin.Context, status int, name string, data any) {
	t, ok := p.pages[name]
	if !ok {
		p.InternalError(c, fmt.Errorf("no page template %q", name))
		return
	}
	var buf bytes.Buffer
	v := View{Person: CurrentPerson(c), CSRF: p.csrfToken(c), Stylesheet: stylesheet.path, Icon: icon.path,
		Version: buildinfo.Version(), Page: data}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		p.InternalError(c, fmt.Errorf("render %s: %w", name, err))
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// Problem is the error page's data.
type Problem struct {
	Title   string
	Message string
	// Retry, when set, is where the person can start over.
	Retry      string
	RetryLabel string
}

// Fail shows err as an error page. An apperr.Error is the person's to act
// on and is shown with its status; anything else is logged and shown as a
// generic failure.
func (p *Pages) Fail(c *gin.Context, err error) {
	e, ok := apperr.As(err)
	if !ok {
		p.InternalError(c, err)
		return
	}
	page := Problem{Title: http.StatusText(e.Status()), Message: PersonMessage(e, nil)}
	if e.Code == apperr.NotFound {
		page.Retry, page.RetryLabel = "/inbox", "Back to your inbox"
	}
	p.Render(c, e.Status(), "error", page)
	c.Abort()
}

// InternalError logs err, which a page met and cannot show, and answers
// a plain 500 that says so.
func (p *Pages) InternalError(c *gin.Context, err error) {
	p.log.ErrorContext(c.Request.Context(), "page failed", "method", c.Request.Method, "route", logging.Route(c), "error", err)
	c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8",
		[]byte("Something went wrong on our side and it has been logged. Try again in a moment."))
	c.Abort()
}

// Wait returns once the sign-in emails still going out after their
// responses have been sent or have failed (each within its timeout). Call
// it after the server stops taking requests, so none is lost at shutdown.
func (p *Pages) Wait() { p.sending.Wait() }

// funcs are the helpers templates may call.
var funcs = template.FuncMap{
	"rfc3339":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"utc":        func(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") },
	"until":      until,
	"reportPath": paths.Report,
	"add":        func(a, b int) int { return a + b },
	"deref":      deref,
	// seconds writes a whole number of seconds as people write it.
	"seconds": func(n int) string { return validate.Duration(time.Duration(n) * time.Second) },
}

// until says how long until t, coarsely, as people say it.
func until(t time.Time) string {
	d := time.Until(t)
	if d <= 0 {
		return "expired"
	}
	if d < time.Minute {
		return "in less than a minute"
	}
	return "in " + coarse(d)
}

// coarse writes d in its largest whole unit up to days ("3 hours",
// "12 days"), as people say a wait; under a minute is "less than a
// minute".
func coarse(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	default:
		return plural(int(d/(24*time.Hour)), "day")
	}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
