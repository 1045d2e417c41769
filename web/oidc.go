package web

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/randtoken"
)

// OIDCSettings configure optional single sign-on; nil turns it off.
// Issuer, ClientID and ClientSecret are all required.
type OIDCSettings struct {
	// Issuer is the provider's issuer URL, exactly as its discovery
	// document states it (e.g. https://acme.okta.com).
	Issuer       string
	ClientID     string
	ClientSecret string
	// Label is the sign-in button's text; empty means defaultOIDCLabel.
	Label string
	// HTTPClient reaches the provider; nil means a client that gives up
	// after oidcTimeout.
	HTTPClient *http.Client
}

const (
	// defaultOIDCLabel is the button's text when no label is configured.
	defaultOIDCLabel = "Sign in with single sign-on"
	// oidcCookie holds one sign-in in progress: state, nonce, PKCE
	// verifier and the page to go on to. It lasts oidcFlowLifetime and
	// has Path=/ like every cookie here, which the __Host- prefix needs.
	oidcCookie       = "assent_oidc"
	oidcFlowLifetime = 10 * time.Minute
	// oidcTimeout bounds each call to the provider: discovery, keys and
	// the code exchange.
	oidcTimeout = 10 * time.Second
	// oidcCallbackPath is where the provider sends the browser back; the
	// redirect URL registered with the provider is the base URL + this.
	oidcCallbackPath = "/signin/oidc/callback"
)

// oidcSignIn is single sign-on with one OpenID Connect provider. The
// provider is discovered on first use, not at start, so the pages start
// when the provider is down; a failed discovery is tried again next time.
type oidcSignIn struct {
	settings    OIDCSettings
	redirectURL string
	client      *http.Client

	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDC(s *OIDCSettings, baseURL string) *oidcSignIn {
	if s == nil {
		return nil
	}
	o := &oidcSignIn{settings: *s, redirectURL: baseURL + oidcCallbackPath, client: s.HTTPClient}
	if o.client == nil {
		o.client = &http.Client{Timeout: oidcTimeout}
	}
	if o.settings.Label == "" {
		o.settings.Label = defaultOIDCLabel
	}
	return o
}

// discover returns the provider, reading its discovery document once.
// Two first sign-ins at the same moment may both read it; one wins.
func (o *oidcSignIn) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	p := o.provider
	o.mu.Unlock()
	if p != nil {
		return p, nil
	}
	ctx, cancel := context.WithTimeout(o.context(ctx), oidcTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.settings.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover OIDC provider %s: %w", o.settings.Issuer, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider == nil {
		o.provider = p
	}
	return o.provider, nil
}

// context makes go-oidc and oauth2 reach the provider with our client.
func (o *oidcSignIn) context(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, o.client)
}

func (o *oidcSignIn) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.settings.ClientID, ClientSecret: o.settings.ClientSecret,
		Endpoint: p.Endpoint(), RedirectURL: o.redirectURL, Scopes: []string{oidc.ScopeOpenID, "email"}}
}

// oidcLabel is the sign-in button's text, or empty when single sign-on
// is off.
func (p *Pages) oidcLabel() string {
	if p.oidc == nil {
		return ""
	}
	return p.oidc.settings.Label
}

// mountOIDC adds the single sign-on routes when OIDC is configured.
func (p *Pages) mountOIDC(g *gin.RouterGroup) {
	if p.oidc == nil {
		return
	}
	g.GET("/signin/oidc", p.startOIDC)
	g.GET(oidcCallbackPath, p.finishOIDC)
}

// oidcFlow is what the browser keeps between leaving for the provider and
// coming back. It needs no signature: the state in it must match the one
// the provider sends back, which binds the answer to this browser, and
// the nonce and verifier only make the provider's answer harder to reuse.
type oidcFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"x"`
}

// startOIDC sends the browser to the provider with a fresh state, nonce
// and PKCE challenge, remembered in a short-lived cookie.
func (p *Pages) startOIDC(c *gin.Context) {
	next := safeNext(c.Query("next"))
	prov, err := p.oidc.discover(c.Request.Context())
	if err != nil {
		p.log.ErrorContext(c.Request.Context(), "single sign-on unavailable", "error", err)
		p.oidcFailed(c, http.StatusBadGateway, "Single sign-on is not available",
			"The sign-in service could not be reached. Try again in a moment, or get a sign-in link by email.", next)
		return
	}
	flow := oidcFlow{State: randtoken.New(), Nonce: randtoken.New(), Verifier: oauth2.GenerateVerifier(), Next: next}
	raw, err := json.Marshal(flow)
	if err != nil {
		p.InternalError(c, err)
		return
	}
	p.setCookie(c, oidcCookie, base64.RawURLEncoding.EncodeToString(raw), time.Now().Add(oidcFlowLifetime))
	c.Redirect(http.StatusFound, p.oidc.oauth(prov).AuthCodeURL(flow.State,
		oidc.Nonce(flow.Nonce), oauth2.S256ChallengeOption(flow.Verifier)))
}

func (p *Pages) readFlow(c *gin.Context) (oidcFlow, bool) {
	var f oidcFlow
	v, err := p.cookie(c, oidcCookie)
	if err != nil || v == "" || len(v) > 1024 {
		return f, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(raw, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		return oidcFlow{}, false
	}
	f.Next = safeNext(f.Next)
	return f, true
}

// finishOIDC is where the provider sends the browser back. It checks the
// state, exchanges the code (with the PKCE verifier), verifies the ID
// token and its nonce, and signs in the person with the verified email,
// as the emailed link would. It never creates an account.
func (p *Pages) finishOIDC(c *gin.Context) {
	// The address holds the code; keep it out of any Referer.
	c.Header("Referrer-Policy", "no-referrer")
	ctx := c.Request.Context()
	flow, ok := p.readFlow(c)
	// The cookie serves one answer, whatever it is.
	p.setCookie(c, oidcCookie, "", noExpiry)
	if !ok {
		p.oidcFailed(c, http.StatusBadRequest, "This sign-in has expired",
			fmt.Sprintf("Signing in took longer than %d minutes, or it began in another browser. Start again.", int(oidcFlowLifetime/time.Minute)), defaultNext)
		return
	}
	if subtle.ConstantTimeCompare([]byte(c.Query("state")), []byte(flow.State)) != 1 {
		p.log.WarnContext(ctx, "single sign-on refused: state does not match")
		p.oidcFailed(c, http.StatusBadRequest, "This sign-in did not start here",
			"The answer from the sign-in service does not belong to a sign-in started in this browser. Nothing was changed. Start again.", flow.Next)
		return
	}
	if iss := c.Query("iss"); iss != "" && iss != p.oidc.settings.Issuer {
		p.log.WarnContext(ctx, "single sign-on refused: answer from another issuer", "iss", iss)
		p.oidcFailed(c, http.StatusBadRequest, "This sign-in could not be verified",
			"The answer came from a sign-in service other than the one configured. Nothing was changed.", flow.Next)
		return
	}
	if e := c.Query("error"); e != "" {
		p.log.InfoContext(ctx, "single sign-on refused by the provider", "error", e, "description", c.Query("error_description"))
		msg := "The sign-in service did not sign you in (" + e + ")."
		if d := c.Query("error_description"); d != "" && len(d) <= 300 {
			msg = "The sign-in service did not sign you in: " + d
		}
		p.oidcFailed(c, http.StatusForbidden, "You were not signed in", msg, flow.Next)
		return
	}
	code := c.Query("code")
	if code == "" {
		p.oidcFailed(c, http.StatusBadRequest, "This sign-in could not be completed",
			"The sign-in service sent no authorisation code. Start again.", flow.Next)
		return
	}

	email, failure := p.verifiedEmail(c, flow, code)
	if failure != nil {
		p.oidcFailed(c, failure.status, failure.title, failure.message, flow.Next)
		return
	}
	active, err := p.accounts.SingleSignOn(ctx, email)
	switch {
	case errors.Is(err, accounts.ErrNoAccount):
		p.log.InfoContext(ctx, "single sign-on refused: no account", "email", email)
		p.oidcFailed(c, http.StatusForbidden, "No account for "+email,
			"The sign-in service vouched for "+email+", but no organisation on Assent has a member or guest with that address. Ask an administrator of your organisation to add you.", flow.Next)
	case errors.Is(err, accounts.ErrPersonInactive):
		p.log.InfoContext(ctx, "single sign-on refused: deactivated", "email", email)
		p.oidcFailed(c, http.StatusForbidden, "This account has been deactivated",
			"The account for "+email+" has been deactivated. Ask an administrator of the organisation.", flow.Next)
	case err != nil:
		p.InternalError(c, err)
	case len(active) == 1:
		p.startSession(c, active[0], flow.Next)
	default:
		p.chooseOrganization(c, email, active, flow.Next)
	}
}

type oidcFailure struct {
	status         int
	title, message string
}

// verifiedEmail exchanges the code and returns the ID token's email once
// the token, its nonce and the email's verification all check out.
func (p *Pages) verifiedEmail(c *gin.Context, flow oidcFlow, code string) (string, *oidcFailure) {
	ctx := c.Request.Context()
	unreachable := &oidcFailure{http.StatusBadGateway, "This sign-in could not be completed",
		"The sign-in service could not be reached or refused to complete the sign-in. Start again in a moment."}
	unverified := &oidcFailure{http.StatusBadRequest, "This sign-in could not be verified",
		"The answer from the sign-in service did not pass our checks. Nothing was changed. Start again."}
	prov, err := p.oidc.discover(ctx)
	if err != nil {
		p.log.ErrorContext(ctx, "single sign-on unavailable", "error", err)
		return "", unreachable
	}
	xctx, cancel := context.WithTimeout(p.oidc.context(ctx), oidcTimeout)
	defer cancel()
	tok, err := p.oidc.oauth(prov).Exchange(xctx, code, oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		p.log.WarnContext(ctx, "single sign-on: code exchange failed", "error", err)
		return "", unreachable
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		p.log.WarnContext(ctx, "single sign-on: the token response has no ID token")
		return "", unreachable
	}
	idt, err := prov.Verifier(&oidc.Config{ClientID: p.oidc.settings.ClientID}).Verify(xctx, raw)
	if err != nil {
		p.log.WarnContext(ctx, "single sign-on refused: ID token not valid", "error", err)
		return "", unverified
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(flow.Nonce)) != 1 {
		p.log.WarnContext(ctx, "single sign-on refused: nonce does not match")
		return "", unverified
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		p.log.WarnContext(ctx, "single sign-on refused: claims not readable", "error", err)
		return "", unverified
	}
	email := accounts.NormalizeEmail(claims.Email)
	if !validEmail(email) {
		p.log.InfoContext(ctx, "single sign-on refused: no email in the ID token", "subject", idt.Subject)
		return "", &oidcFailure{http.StatusForbidden, "Your email address was not shared",
			"The sign-in service did not tell us your email address, which is how Assent knows you. Ask your administrator to share the email claim with Assent, or get a sign-in link by email."}
	}
	if !isTrue(claims.EmailVerified) {
		p.log.InfoContext(ctx, "single sign-on refused: email not verified", "email", email)
		return "", &oidcFailure{http.StatusForbidden, "Your email address is not verified",
			"The sign-in service has not verified " + email + ", so it cannot sign you in to Assent. Verify the address with the sign-in service, or get a sign-in link by email."}
	}
	return email, nil
}

// isTrue reads email_verified, which some providers send as a string.
func isTrue(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

type chooseOrgPage struct {
	Email   string
	Next    string
	Minutes int
	Choices []accounts.IssuedSignInLink
}

// chooseOrganization asks someone who belongs to several organisations
// which one to sign in to. Each choice is a sign-in link, issued for this
// browser instead of emailed, posted to the emailed link's own form: the
// link's rules (single use, expiry, deactivation) apply unchanged.
func (p *Pages) chooseOrganization(c *gin.Context, email string, people []*accounts.Person, next string) {
	page := chooseOrgPage{Email: email, Next: next, Minutes: linkMinutes}
	for _, person := range people {
		l, err := p.accounts.IssueSignInLink(c.Request.Context(), person)
		if err != nil {
			p.InternalError(c, err)
			return
		}
		page.Choices = append(page.Choices, l)
	}
	p.Render(c, http.StatusOK, "signin_choose", page)
}

// oidcFailed shows why single sign-on did not sign the person in, with a
// way back to the sign-in page that keeps the page they asked for.
func (p *Pages) oidcFailed(c *gin.Context, status int, title, message, next string) {
	retry := "/signin"
	if next != "" && next != defaultNext {
		retry += "?next=" + url.QueryEscape(next)
	}
	p.Render(c, status, "error", Problem{Title: title, Message: message, Retry: retry, RetryLabel: "Back to sign-in"})
	c.Abort()
}
