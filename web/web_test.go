package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
)

func init() { gin.SetMode(gin.TestMode) }

// site is the pages on a real store and a real mailbox, served over HTTP.
type site struct {
	url     string
	pages   *web.Pages
	store   *models.Store
	mailbox *mail.Mailbox
	db      *gorm.DB
	org     *models.Organization
	ada     *models.Member
	// services are those the pages serve with (app.Build).
	services *app.Services
	// temporal is set on a site whose pages act (decidingSite).
	temporal client.Client
	// transport reaches the server; nil is the default (plain HTTP).
	transport http.RoundTripper
	// engine serves the pages, for tests that read its routes.
	engine *gin.Engine
}

func newSite(t *testing.T, db *gorm.DB) *site {
	return newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{}, app.Deps{})
}

// newSiteWith serves the pages on store with the rest of deps (OIDC nil
// for no single sign-on) and services built from svc (Temporal nil for
// pages that only read); the store, mailbox and base URL are the site's
// own.
func newSiteWith(t *testing.T, store *models.Store, deps web.Deps, svc app.Deps) *site {
	return serveSite(t, httptest.NewServer, store, deps, svc)
}

// newTLSSite serves the pages over HTTPS with an https:// base URL, as in
// production: cookies are Secure and __Host- named.
func newTLSSite(t *testing.T, db *gorm.DB) *site {
	return serveSite(t, httptest.NewTLSServer, models.NewStore(db, testenv.Keys()), web.Deps{}, app.Deps{})
}

func serveSite(t *testing.T, serve func(http.Handler) *httptest.Server, store *models.Store, deps web.Deps, svc app.Deps) *site {
	t.Helper()
	ctx := context.Background()
	s := &site{store: store, mailbox: mail.NewMailbox(0), db: store.DB()}
	engine := gin.New()
	srv := serve(engine)
	t.Cleanup(srv.Close)
	s.url, s.transport, s.engine = srv.URL, srv.Client().Transport, engine
	svc.Store, svc.BaseURL = s.store, srv.URL
	s.services = app.Build(svc)
	deps.Mailer, deps.BaseURL, deps.Services = s.mailbox, srv.URL, s.services.Web()
	s.pages = web.New(deps)
	s.pages.Mount(engine)

	var err error
	s.org, err = s.store.CreateOrganization(ctx, "Acme & Co", "")
	require.NoError(t, err)
	s.ada, err = s.store.CreateMember(ctx, s.org.ID, "ada@example.com", "Ada Lovelace", "")
	require.NoError(t, err)
	return s
}

// approval stores a pending request; the inbox reads rows, so no workflow
// is needed.
func (s *site) approval(t *testing.T, title, risk string, expiresAt time.Time, approvers ...string) *approvals.Approval {
	t.Helper()
	a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: title,
		ExpiresAt: expiresAt.UTC().Truncate(time.Second), Requester: "key_test", RequestedBy: "billing agent"}, Risk: risk, ApproverIDs: approvers,
		RequiredApprovals: 1}
	_, err := requests.Insert(context.Background(), s.store, approvals.Records(s.store), a, nil)
	require.NoError(t, err)
	return a
}

// link asks the store for a fresh sign-in link token for email.
func (s *site) link(t *testing.T, email string) string {
	t.Helper()
	links, err := accounts.New(s.store).CreateSignInLinks(context.Background(), email)
	require.NoError(t, err)
	require.Len(t, links, 1)
	return links[0].Token
}

// browser keeps cookies like a browser and does not follow redirects, so
// tests see each one.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	// header is sent with every request, as a proxy in front would add it.
	header http.Header
}

func (s *site) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{t: t, base: s.url, c: &http.Client{Transport: s.transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	body   string
	header http.Header
	resp   *http.Response
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	for k, v := range b.header {
		req.Header[k] = v
	}
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return page{status: resp.StatusCode, body: string(body), header: resp.Header, resp: resp}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	if !strings.HasPrefix(path, "http") {
		path = b.base + path
	}
	req, err := http.NewRequest(http.MethodGet, path, nil)
	require.NoError(b.t, err)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(form.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func (b *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var (
	csrfField       = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	hiddenToken     = regexp.MustCompile(`name="token" value="([^"]+)"`)
	submissionField = regexp.MustCompile(`name="submission" value="([^"]+)"`)
)

func (p page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	require.NotNil(t, m, "no csrf field in:\n%s", p.body)
	return m[1]
}

// submission is the first form's submission id, which makes its Update
// run once.
func (p page) submission(t *testing.T) string {
	t.Helper()
	m := submissionField.FindStringSubmatch(p.body)
	require.NotNil(t, m, "no submission field in:\n%s", p.body)
	return m[1]
}

// signIn goes through the sign-in link pages with a fresh link and
// returns the CSRF token of the signed-in session.
func (b *browser) signIn(s *site, email string) string {
	b.t.Helper()
	confirm := b.get("/signin/link?token=" + s.link(b.t, email))
	require.Equal(b.t, http.StatusOK, confirm.status, confirm.body)
	r := b.post("/signin/link", url.Values{"csrf": {confirm.csrf(b.t)}, "token": {hiddenToken.FindStringSubmatch(confirm.body)[1]}})
	require.Equal(b.t, http.StatusSeeOther, r.status, r.body)
	inbox := b.get("/inbox")
	require.Equal(b.t, http.StatusOK, inbox.status, inbox.body)
	return inbox.csrf(b.t)
}

func TestSignInFlowEndToEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		other, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "", "")
		require.NoError(t, err)
		soon, later := time.Now().Add(2*time.Hour), time.Now().Add(48*time.Hour)
		script := s.approval(t, `<script>alert("x")</script> Pay invoice`, models.RiskLow, later, s.ada.ID)
		urgent := s.approval(t, "Rotate keys", models.RiskMedium, soon, s.ada.ID)
		critical := s.approval(t, "Delete backups", models.RiskCritical, later, s.ada.ID, other.ID)
		notMine := s.approval(t, "Not for Ada", models.RiskHigh, soon, other.ID)
		decided := s.approval(t, "Already decided", models.RiskHigh, soon, s.ada.ID)
		testenv.Transition(t, s.store, approvals.Records(s.store), s.org.ID, decided.ID, 1, func(a *approvals.Approval) { a.Status = "approved" })

		b := s.browser(t)
		r := b.get("/inbox")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/signin?next=%2Finbox", r.header.Get("Location"))
		r = b.get("/")
		assert.Equal(t, http.StatusFound, r.status)
		assert.Equal(t, "/signin", r.header.Get("Location"))

		form := b.get("/signin")
		require.Equal(t, http.StatusOK, form.status)
		assert.Contains(t, form.body, `<label for="email">`)
		assert.Contains(t, form.body, `<footer class="site">Assent (devel)</footer>`, "the footer says the server's version")
		assert.Contains(t, form.header.Get("Content-Security-Policy"), "default-src 'none'")
		r = b.post("/signin", url.Values{"csrf": {form.csrf(t)}, "email": {" ADA@example.com "}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Contains(t, r.body, "Check your email")

		s.pages.Wait()
		msgs := s.mailbox.Messages()
		require.Len(t, msgs, 1)
		msg := msgs[0]
		assert.Equal(t, []string{"ada@example.com"}, msg.To)
		assert.Equal(t, "Sign in to Assent", msg.Subject)
		assert.Contains(t, msg.Text, "Acme & Co")
		assert.Contains(t, msg.HTML, "Acme &amp; Co")
		require.Len(t, msg.Links, 1)
		link := msg.Links[0]
		require.True(t, strings.HasPrefix(link, s.url+"/signin/link?token="), link)

		// Opening the link (as a mail scanner would) changes nothing.
		for range 2 {
			r = b.get(link)
			require.Equal(t, http.StatusOK, r.status, r.body)
		}
		assert.Contains(t, r.body, "Sign in to Acme &amp; Co")
		assert.Contains(t, r.body, "Ada Lovelace")
		assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
		assert.Nil(t, b.cookie(web.SessionCookie))

		token := hiddenToken.FindStringSubmatch(r.body)[1]
		r = b.post("/signin/link", url.Values{"csrf": {r.csrf(t)}, "token": {token}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/inbox", r.header.Get("Location"))
		var sc *http.Cookie
		for _, c := range r.resp.Cookies() {
			if c.Name == web.SessionCookie {
				sc = c
			}
		}
		require.NotNil(t, sc, "session cookie set")
		assert.True(t, sc.HttpOnly)
		assert.Equal(t, http.SameSiteLaxMode, sc.SameSite)
		assert.Equal(t, "/", sc.Path)
		assert.False(t, sc.Secure, "http:// base URL: dev")
		assert.WithinDuration(t, time.Now().Add(models.SessionLifetime), sc.Expires, time.Minute)

		inbox := b.get("/inbox")
		require.Equal(t, http.StatusOK, inbox.status, inbox.body)
		body := inbox.body
		assert.Contains(t, body, "Ada Lovelace")
		assert.Contains(t, body, `action="/signout"`)
		assert.Contains(t, body, "3 waiting on you, 1 due within a day.")
		assert.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Pay invoice")
		assert.NotContains(t, body, "<script>")
		assert.NotContains(t, body, notMine.Title)
		assert.NotContains(t, body, decided.Title)
		// The highest risk first, then the soonest due (order=attention).
		iu := strings.Index(body, `href="/approvals/`+urgent.ID+`"`)
		ic := strings.Index(body, `href="/approvals/`+critical.ID+`"`)
		is := strings.Index(body, `href="/approvals/`+script.ID+`"`)
		require.True(t, iu > 0 && ic > 0 && is > 0, body)
		assert.True(t, ic < iu && iu < is, "order: critical, urgent (medium), low")
		r = b.get("/")
		assert.Equal(t, "/inbox", r.header.Get("Location"))

		// The link is used up.
		r = b.post("/signin/link", url.Values{"csrf": {inbox.csrf(t)}, "token": {token}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, r.body, "already been used")
		r = s.browser(t).get(link)
		assert.Equal(t, http.StatusConflict, r.status)

		// Signing out ends the session for good, not just in this browser.
		stolen := b.cookie(web.SessionCookie).Value
		r = b.post("/signout", url.Values{"csrf": {inbox.csrf(t)}})
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/signin?signedout=1", r.header.Get("Location"))
		assert.Nil(t, b.cookie(web.SessionCookie), "cookie cleared")
		_, _, err = accounts.New(s.store).LoadSession(ctx, stolen)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		r = b.get("/inbox")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Contains(t, b.get("/signin?signedout=1").body, "You are signed out.")
	})
}

func TestUnknownAddressGetsTheSameAnswer(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		csrf := b.get("/signin").csrf(t)
		known := b.post("/signin", url.Values{"csrf": {csrf}, "email": {"ada@example.com"}})
		unknown := b.post("/signin", url.Values{"csrf": {csrf}, "email": {"eve@example.com"}})
		assert.Equal(t, known.status, unknown.status)
		assert.Equal(t, known.body, strings.ReplaceAll(unknown.body, "eve@", "ada@"))
		s.pages.Wait()
		assert.Len(t, s.mailbox.Messages(), 1, "only the known address gets mail")

		bad := b.post("/signin", url.Values{"csrf": {csrf}, "email": {"not an address"}})
		assert.Equal(t, http.StatusBadRequest, bad.status)
		assert.Contains(t, bad.body, `aria-invalid="true"`)
	})
}

func TestSignInLinkOfDeactivatedMemberIsRefused(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		token := s.link(t, "ada@example.com")
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Active = false })

		r := b.get("/inbox")
		assert.Equal(t, http.StatusSeeOther, r.status, "a deactivated member's session has no power")
		r = b.post("/signin/link", url.Values{"csrf": {b.get("/signin").csrf(t)}, "token": {token}})
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "deactivated")
	})
}

func TestNextMustBeALocalPath(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		cases := map[string]string{
			"/approvals/apr_1?tab=questions": "/approvals/apr_1?tab=questions",
			"":                               "/inbox",
			"//evil.example/x":               "/inbox",
			"https://evil.example/":          "/inbox",
			"http:evil.example":              "/inbox",
			`/\evil.example`:                 "/inbox",
			`\\evil.example`:                 "/inbox",
			"/%0d%0aSet-Cookie:x=1":          "/%0d%0aSet-Cookie:x=1",
			"/\r\nSet-Cookie: x=1":           "/inbox",
			"javascript:alert(1)":            "/inbox",
			"inbox":                          "/inbox",
		}
		for next, want := range cases {
			b := s.browser(t)
			confirm := b.get("/signin/link?token=" + s.link(t, "ada@example.com") + "&next=" + url.QueryEscape(next))
			require.Equal(t, http.StatusOK, confirm.status)
			r := b.post("/signin/link", url.Values{"csrf": {confirm.csrf(t)},
				"token": {hiddenToken.FindStringSubmatch(confirm.body)[1]}, "next": {next}})
			require.Equal(t, http.StatusSeeOther, r.status, "next %q: %s", next, r.body)
			assert.Equal(t, want, r.header.Get("Location"), "next %q", next)
		}

		// A page asked for before sign-in is where the emailed link leads.
		b := s.browser(t)
		r := b.get("/signin?next=" + url.QueryEscape("/approvals/apr_2"))
		r = b.post("/signin", url.Values{"csrf": {r.csrf(t)}, "email": {"ada@example.com"}, "next": {"/approvals/apr_2"}})
		require.Equal(t, http.StatusOK, r.status)
		s.pages.Wait()
		link := s.mailbox.Messages()[0].Links[0]
		confirm := b.get(link)
		assert.Contains(t, confirm.body, `name="next" value="/approvals/apr_2"`)
		r = b.post("/signin/link", url.Values{"csrf": {confirm.csrf(t)},
			"token": {hiddenToken.FindStringSubmatch(confirm.body)[1]}, "next": {"/approvals/apr_2"}})
		assert.Equal(t, "/approvals/apr_2", r.header.Get("Location"))
	})
}

func TestPostsWithoutTheCSRFTokenAreRefused(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)

		// Signed out: the double-submit cookie must match the field.
		b := s.browser(t)
		csrf := b.get("/signin").csrf(t)
		for _, form := range []url.Values{
			{"email": {"ada@example.com"}},
			{"email": {"ada@example.com"}, "csrf": {"wrong"}},
		} {
			r := b.post("/signin", form)
			assert.Equal(t, http.StatusForbidden, r.status)
			assert.Contains(t, r.body, "This form has expired")
		}
		r := s.browser(t).post("/signin", url.Values{"email": {"ada@example.com"}, "csrf": {csrf}})
		assert.Equal(t, http.StatusForbidden, r.status, "a token without its cookie")
		s.pages.Wait()
		assert.Empty(t, s.mailbox.Messages())

		// Signed in: the session's token.
		csrf = b.signIn(s, "ada@example.com")
		r = b.post("/signout", url.Values{})
		assert.Equal(t, http.StatusForbidden, r.status)
		r = b.post("/signout", url.Values{"csrf": {b.cookie("assent_csrf").Value}})
		assert.Equal(t, http.StatusForbidden, r.status, "the signed-out token no longer counts")
		assert.Equal(t, http.StatusOK, b.get("/inbox").status, "still signed in")
		r = b.post("/signout", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusSeeOther, r.status)
	})
}

func TestGuestsSignInToo(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		g, _, err := s.store.CreateGuest(context.Background(), s.org.ID, "gus@example.com", "Gus")
		require.NoError(t, err)
		s.approval(t, "For the guest", models.RiskLow, time.Now().Add(time.Hour), g.ID)
		b := s.browser(t)
		b.signIn(s, "gus@example.com")
		inbox := b.get("/inbox")
		assert.Contains(t, inbox.body, "For the guest")
		assert.Contains(t, inbox.body, "Gus")
	})
}

func TestSecureCookiesOutsideDev(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		engine := gin.New()
		web.New(web.Deps{Mailer: mail.NewMailbox(0), BaseURL: "https://assent.example",
			Services: app.Build(app.Deps{Store: store, BaseURL: "https://assent.example"}).Web()}).Mount(engine)
		w := httptest.NewRecorder()
		engine.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/signin", nil))
		require.Equal(t, http.StatusOK, w.Code)
		c := w.Result().Cookies()
		require.Len(t, c, 1)
		assert.Equal(t, "__Host-assent_csrf", c[0].Name)
		assert.Equal(t, "/", c[0].Path)
		assert.Empty(t, c[0].Domain)
		assert.True(t, c[0].Secure)
		assert.True(t, c[0].HttpOnly)
		assert.Equal(t, http.SameSiteLaxMode, c[0].SameSite)
	})
}

// apiSite serves the pages mounted on the API's engine, as serve does, so
// the engine's settings (trusted proxies) apply.
func apiSite(t *testing.T, db *gorm.DB, trusted []string) *site {
	t.Helper()
	s := &site{store: models.NewStore(db, testenv.Keys()), mailbox: mail.NewMailbox(0), db: db}
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.services = app.Build(app.Deps{Store: s.store, Logger: quiet, BaseURL: srv.URL})
	s.pages = web.New(web.Deps{Mailer: s.mailbox, BaseURL: srv.URL, Services: s.services.Web()})
	handler = api.New(api.Deps{Logger: quiet, BaseURL: srv.URL,
		TrustedProxies: trusted, Mount: s.pages.Mount, Services: s.services.API()})
	return s
}

func TestSignInIsLimitedPerClientAddress(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		signIn := func(b *browser) page {
			t.Helper()
			form := b.get("/signin")
			require.Equal(t, http.StatusOK, form.status, form.body)
			return b.post("/signin", url.Values{"csrf": {form.csrf(t)}, "email": {"nobody@example.com"}})
		}

		// No proxy trusted: the connection's address counts, and a forged
		// X-Forwarded-For changes nothing.
		s := apiSite(t, db, nil)
		b := s.browser(t)
		for i := range 20 {
			r := signIn(b)
			require.Equal(t, http.StatusOK, r.status, "request %d", i+1)
		}
		r := signIn(b)
		assert.Equal(t, http.StatusTooManyRequests, r.status)
		assert.Equal(t, "30", r.header.Get("Retry-After"))
		assert.Contains(t, r.body, "Too many sign-in requests have come from your network. Try again in 1 minute.")
		assert.Contains(t, r.body, `value="nobody@example.com"`, "what was typed stays")
		forged := s.browser(t)
		forged.header = http.Header{"X-Forwarded-For": {"203.0.113.9"}}
		assert.Equal(t, http.StatusTooManyRequests, signIn(forged).status)

		// Behind a trusted proxy each client named has its own allowance.
		s = apiSite(t, db, []string{"127.0.0.1"})
		office := s.browser(t)
		office.header = http.Header{"X-Forwarded-For": {"198.51.100.7"}}
		for range 20 {
			require.Equal(t, http.StatusOK, signIn(office).status)
		}
		assert.Equal(t, http.StatusTooManyRequests, signIn(office).status)
		home := s.browser(t)
		home.header = http.Header{"X-Forwarded-For": {"198.51.100.8"}}
		assert.Equal(t, http.StatusOK, signIn(home).status)
	})
}
