package web_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// identityProvider is a real OpenID Connect provider in this process
// (mockoidc): discovery, JWKS, authorize and token endpoints, RS256-signed
// ID tokens carrying the nonce it was sent, and PKCE checked at the token
// endpoint. It signs in whoever is queued with QueueUser.
type identityProvider struct {
	*mockoidc.MockOIDC
	// down makes every endpoint answer 503, as a provider that is off.
	down atomic.Bool
	// discoveries counts the discovery documents served.
	discoveries atomic.Int32
}

func newIdentityProvider(t *testing.T) *identityProvider {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	require.NoError(t, err)
	idp := &identityProvider{MockOIDC: m}
	require.NoError(t, m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if idp.down.Load() {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
			if r.URL.Path == mockoidc.DiscoveryEndpoint {
				idp.discoveries.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, m.Start(ln, nil))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.Server.Shutdown(ctx)
	})
	return idp
}

// person queues who the provider signs in next.
func (idp *identityProvider) person(email string, verified bool) {
	idp.QueueUser(&mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: verified})
}

func (idp *identityProvider) settings(label string) *web.OIDCSettings {
	cfg := idp.Config()
	return &web.OIDCSettings{Issuer: cfg.Issuer, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Label: label}
}

// newOIDCSite is newSite with single sign-on configured (nil: off).
func newOIDCSite(t *testing.T, db *gorm.DB, oidc *web.OIDCSettings) *site {
	return newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{OIDC: oidc}, app.Deps{})
}

// startSSO follows the sign-in button to the provider's authorize
// address, which it returns.
func (b *browser) startSSO(next string) *url.URL {
	b.t.Helper()
	path := "/signin/oidc"
	if next != "" {
		path += "?next=" + url.QueryEscape(next)
	}
	r := b.get(path)
	require.Equal(b.t, http.StatusFound, r.status, r.body)
	u, err := url.Parse(r.header.Get("Location"))
	require.NoError(b.t, err)
	return u
}

// authorize visits the provider, which signs in the queued person and
// sends the browser back; it returns the callback address.
func (b *browser) authorize(u *url.URL) *url.URL {
	b.t.Helper()
	r := b.get(u.String())
	require.Equal(b.t, http.StatusFound, r.status, r.body)
	back, err := url.Parse(r.header.Get("Location"))
	require.NoError(b.t, err)
	return back
}

// sso runs the whole round trip and returns the callback's answer.
func (b *browser) sso(next string) page {
	b.t.Helper()
	return b.get(b.authorize(b.startSSO(next)).String())
}

// flowCookie is the sign-in in progress, as the browser would send it to
// the callback.
func (b *browser) flowCookie() *http.Cookie {
	u, _ := url.Parse(b.base + "/signin/oidc/callback")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == "assent_oidc" {
			return c
		}
	}
	return nil
}

func sessionCookieSet(r page) bool {
	for _, c := range r.resp.Cookies() {
		if c.Name == web.SessionCookie && c.Value != "" {
			return true
		}
	}
	return false
}

func TestOIDCSignInEndToEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings("Sign in with Okta"))
		s.approval(t, "Rotate keys", models.RiskMedium, time.Now().Add(time.Hour), s.ada.ID)
		b := s.browser(t)

		form := b.get("/signin")
		require.Equal(t, http.StatusOK, form.status)
		assert.Contains(t, form.body, `href="/signin/oidc?next=`)
		assert.Contains(t, form.body, "Sign in with Okta")
		assert.Equal(t, int32(0), idp.discoveries.Load(), "the provider is discovered on first use, not at start")

		// Start: state, nonce and PKCE go to the provider; the browser
		// keeps them in a short-lived cookie for the callback.
		start := b.get("/signin/oidc?next=%2Finbox")
		require.Equal(t, http.StatusFound, start.status, start.body)
		var set *http.Cookie
		for _, c := range start.resp.Cookies() {
			if c.Name == "assent_oidc" {
				set = c
			}
		}
		require.NotNil(t, set)
		assert.True(t, set.HttpOnly)
		assert.Equal(t, "/", set.Path, "as the __Host- prefix demands")
		assert.Equal(t, http.SameSiteLaxMode, set.SameSite)
		assert.Equal(t, 600, set.MaxAge, "ten minutes to sign in")
		auth, err := url.Parse(start.header.Get("Location"))
		require.NoError(t, err)
		assert.Equal(t, idp.AuthorizationEndpoint(), auth.Scheme+"://"+auth.Host+auth.Path)
		q := auth.Query()
		assert.Equal(t, idp.ClientID, q.Get("client_id"))
		assert.Equal(t, "code", q.Get("response_type"))
		assert.Equal(t, s.url+"/signin/oidc/callback", q.Get("redirect_uri"))
		assert.Contains(t, strings.Fields(q.Get("scope")), "openid")
		assert.Contains(t, strings.Fields(q.Get("scope")), "email")
		assert.NotEmpty(t, q.Get("state"))
		assert.NotEmpty(t, q.Get("nonce"))
		assert.NotEqual(t, q.Get("state"), q.Get("nonce"))
		assert.Equal(t, "S256", q.Get("code_challenge_method"))
		assert.NotEmpty(t, q.Get("code_challenge"))
		flow := b.flowCookie()
		require.NotNil(t, flow, "the flow cookie is sent to the callback")
		assert.NotContains(t, flow.Value, q.Get("code_challenge"))

		// The provider vouches for Ada (its address in another case).
		idp.person("Ada@Example.com", true)
		back := b.authorize(auth)
		assert.Equal(t, s.url+"/signin/oidc/callback", back.Scheme+"://"+back.Host+back.Path)
		r := b.get(back.String())
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/inbox", r.header.Get("Location"))
		assert.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
		var sc *http.Cookie
		for _, c := range r.resp.Cookies() {
			switch c.Name {
			case web.SessionCookie:
				sc = c
			case "assent_oidc":
				assert.True(t, c.MaxAge < 0, "the flow cookie is cleared")
			}
		}
		require.NotNil(t, sc)
		assert.True(t, sc.HttpOnly)
		assert.Equal(t, "/", sc.Path)
		assert.WithinDuration(t, time.Now().Add(models.SessionLifetime), sc.Expires, time.Minute)
		assert.Nil(t, b.flowCookie())

		inbox := b.get("/inbox")
		require.Equal(t, http.StatusOK, inbox.status, inbox.body)
		assert.Contains(t, inbox.body, "Ada Lovelace")
		assert.Contains(t, inbox.body, "Acme &amp; Co")
		assert.Contains(t, inbox.body, "Rotate keys")

		// The callback cannot be replayed: the flow is gone.
		r = b.get(back.String())
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "This sign-in has expired")

		// A second sign-in reuses the discovered provider.
		b2 := s.browser(t)
		idp.person("ada@example.com", true)
		r = b2.sso("")
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, int32(1), idp.discoveries.Load(), "discovery is cached")
	})
}

func TestOIDCRefusesAWrongState(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))

		// An answer meant for another browser's sign-in (login CSRF).
		b := s.browser(t)
		idp.person("ada@example.com", true)
		back := b.authorize(b.startSSO(""))
		q := back.Query()
		q.Set("state", "not-the-state-this-browser-started")
		back.RawQuery = q.Encode()
		r := b.get(back.String())
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "did not start here")
		assert.False(t, sessionCookieSet(r))
		assert.Equal(t, http.StatusSeeOther, b.get("/inbox").status, "not signed in")

		// An answer arriving in a browser that never started one.
		idp.person("ada@example.com", true)
		started := s.browser(t)
		back = started.authorize(started.startSSO(""))
		other := s.browser(t)
		r = other.get(back.String())
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "expired")
		assert.False(t, sessionCookieSet(r))

		// The provider's refusal is shown, with no session.
		b = s.browser(t)
		auth := b.startSSO("")
		r = b.get(s.url + "/signin/oidc/callback?" + url.Values{"state": {auth.Query().Get("state")},
			"error": {"access_denied"}, "error_description": {"The user cancelled."}}.Encode())
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "The user cancelled.")
		assert.False(t, sessionCookieSet(r))
	})
}

func TestOIDCRefusesAWrongNonce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		b := s.browser(t)
		auth := b.startSSO("")
		// The ID token the provider signs carries another nonce, as one
		// replayed from another sign-in would.
		q := auth.Query()
		q.Set("nonce", "a-nonce-from-elsewhere")
		auth.RawQuery = q.Encode()
		idp.person("ada@example.com", true)
		r := b.get(b.authorize(auth).String())
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "could not be verified")
		assert.False(t, sessionCookieSet(r))
		assert.Equal(t, http.StatusSeeOther, b.get("/inbox").status, "not signed in")
	})
}

func TestOIDCRefusesAnUnverifiedEmail(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		b := s.browser(t)
		idp.person("ada@example.com", false)
		r := b.sso("")
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "not verified")
		assert.False(t, sessionCookieSet(r))
		assert.Equal(t, http.StatusSeeOther, b.get("/inbox").status, "not signed in")

		idp.person("", true)
		r = b.sso("")
		assert.Equal(t, http.StatusForbidden, r.status, "no email claim")
		assert.Contains(t, r.body, "email address was not shared")
		assert.False(t, sessionCookieSet(r))
	})
}

func TestOIDCRefusesAnUnknownEmail(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		b := s.browser(t)
		idp.person("eve@example.com", true)
		r := b.sso("")
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "No account for eve@example.com")
		assert.False(t, sessionCookieSet(r))
		assert.Equal(t, http.StatusSeeOther, b.get("/inbox").status, "not signed in")

		var members, guests, sessions int64
		require.NoError(t, db.Model(&models.Member{}).Where("email = ?", "eve@example.com").Count(&members).Error)
		require.NoError(t, db.Model(&models.Guest{}).Where("email = ?", "eve@example.com").Count(&guests).Error)
		require.NoError(t, db.Model(&models.Session{}).Count(&sessions).Error)
		assert.Zero(t, members+guests, "no account is created")
		assert.Zero(t, sessions)
	})
}

func TestOIDCRefusesADeactivatedMember(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		off := false
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Active = off })
		b := s.browser(t)
		idp.person("ada@example.com", true)
		r := b.sso("")
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "deactivated")
		assert.False(t, sessionCookieSet(r))
		var sessions int64
		require.NoError(t, db.Model(&models.Session{}).Count(&sessions).Error)
		assert.Zero(t, sessions)
	})
}

func TestOIDCKeepsASafeNext(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		cases := map[string]string{
			"/approvals/apr_2?tab=questions": "/approvals/apr_2?tab=questions",
			"":                               "/inbox",
			"//evil.example/x":               "/inbox",
			"https://evil.example/":          "/inbox",
			`/\evil.example`:                 "/inbox",
			"javascript:alert(1)":            "/inbox",
		}
		for next, want := range cases {
			b := s.browser(t)
			idp.person("ada@example.com", true)
			r := b.sso(next)
			require.Equal(t, http.StatusSeeOther, r.status, "next %q: %s", next, r.body)
			assert.Equal(t, want, r.header.Get("Location"), "next %q", next)
		}

		// The sign-in page hands the page asked for to the button.
		form := s.browser(t).get("/signin?next=" + url.QueryEscape("/approvals/apr_3"))
		assert.Contains(t, form.body, `href="/signin/oidc?next=%2fapprovals%2fapr_3"`)
	})
}

func TestOIDCButtonOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		off := newOIDCSite(t, db, nil)
		b := off.browser(t)
		r := b.get("/signin")
		require.Equal(t, http.StatusOK, r.status)
		assert.NotContains(t, r.body, "/signin/oidc")
		assert.NotContains(t, r.body, "single sign-on")
		assert.Contains(t, r.body, "No password needed.")
		assert.Equal(t, http.StatusNotFound, b.get("/signin/oidc").status, "no routes without configuration")
		assert.Equal(t, http.StatusNotFound, b.get("/signin/oidc/callback?code=x&state=y").status)

		idp := newIdentityProvider(t)
		on := newOIDCSite(t, db, idp.settings(""))
		r = on.browser(t).get("/signin")
		assert.Contains(t, r.body, `href="/signin/oidc?next=`)
		assert.Contains(t, r.body, "Sign in with single sign-on", "the default label")
		assert.Contains(t, r.body, `<label for="email">`, "the emailed link stays")
	})
}

func TestOIDCProviderDownAtStart(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		idp := newIdentityProvider(t)
		idp.down.Store(true)
		s := newOIDCSite(t, db, idp.settings("Sign in with Okta"))
		b := s.browser(t)
		assert.Contains(t, b.get("/signin").body, "Sign in with Okta", "the pages start without the provider")
		r := b.get("/signin/oidc?next=%2Finbox")
		assert.Equal(t, http.StatusBadGateway, r.status)
		assert.Contains(t, r.body, "could not be reached")
		assert.Nil(t, b.flowCookie())

		// Once the provider is back, the next attempt discovers it.
		idp.down.Store(false)
		idp.person("ada@example.com", true)
		r = b.sso("")
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, http.StatusOK, b.get("/inbox").status)
	})
}

func TestOIDCChoosesAmongOrganisations(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		idp := newIdentityProvider(t)
		s := newOIDCSite(t, db, idp.settings(""))
		globex, err := s.store.CreateOrganization(ctx, "Globex", "")
		require.NoError(t, err)
		_, _, err = s.store.CreateGuest(ctx, globex.ID, "ada@example.com", "Ada (guest)")
		require.NoError(t, err)
		initech, err := s.store.CreateOrganization(ctx, "Initech", "")
		require.NoError(t, err)
		gone, err := s.store.CreateMember(ctx, initech.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		off := false
		testenv.ChangeMember(t, s.store, initech.ID, gone.ID, func(m *models.Member) { m.Active = off })

		b := s.browser(t)
		idp.person("ada@example.com", true)
		r := b.sso("/approvals/apr_9")
		require.Equal(t, http.StatusOK, r.status, r.body)
		assert.Contains(t, r.body, "Choose an organisation")
		assert.Contains(t, r.body, "Sign in to Acme &amp; Co")
		assert.Contains(t, r.body, "Sign in to Globex")
		assert.NotContains(t, r.body, "Initech", "a deactivated membership is not offered")
		assert.False(t, sessionCookieSet(r), "no session before the choice")
		forms := strings.Split(r.body, `<form method="post" action="/signin/link">`)
		require.Len(t, forms, 3)
		globexForm := forms[2]
		require.Contains(t, globexForm, "Globex")
		token := hiddenToken.FindStringSubmatch(globexForm)[1]
		assert.Contains(t, globexForm, `name="next" value="/approvals/apr_9"`)

		// Without the CSRF token the choice is refused.
		r2 := b.post("/signin/link", url.Values{"token": {token}, "next": {"/approvals/apr_9"}})
		assert.Equal(t, http.StatusForbidden, r2.status)

		r2 = b.post("/signin/link", url.Values{"csrf": {r.csrf(t)}, "token": {token}, "next": {"/approvals/apr_9"}})
		require.Equal(t, http.StatusSeeOther, r2.status, r2.body)
		assert.Equal(t, "/approvals/apr_9", r2.header.Get("Location"))
		inbox := b.get("/inbox")
		require.Equal(t, http.StatusOK, inbox.status)
		assert.Contains(t, inbox.body, "Globex")
		assert.Contains(t, inbox.body, "Ada (guest)")

		// Each choice works once.
		r2 = b.post("/signin/link", url.Values{"csrf": {inbox.csrf(t)}, "token": {token}})
		assert.Equal(t, http.StatusConflict, r2.status)
	})
}
