package web

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
)

// SessionCookie holds the session token. It is HttpOnly, SameSite=Lax,
// Path=/ and Secure unless the base URL is http:// (dev); when Secure its
// name carries the __Host- prefix (see cookieName).
const SessionCookie = "assent_session"

// hostPrefix makes browsers take a cookie only when it is Secure, from
// this very host, with Path=/ and no Domain: a sibling subdomain or a
// network attacker cannot plant one.
const hostPrefix = "__Host-"

// noExpiry makes a cookie that ends with the browser session.
var noExpiry time.Time

const (
	sessionKey = "assent.web.session"
	personKey  = "assent.web.person"
)

// loadSession finds who is signed in from the cookie. A cookie whose
// session has ended is cleared, and the request goes on signed out.
func (p *Pages) loadSession(c *gin.Context) {
	token, err := p.cookie(c, SessionCookie)
	if err != nil || token == "" {
		c.Next()
		return
	}
	ctx := c.Request.Context()
	sess, person, err := p.accounts.LoadSession(ctx, token)
	switch {
	case errors.Is(err, accounts.ErrSessionInvalid):
		p.setCookie(c, SessionCookie, "", time.Time{})
	case err != nil:
		p.InternalError(c, err)
		return
	default:
		if err := p.accounts.TouchSession(ctx, sess); err != nil {
			// The page can still be served; the session just ages a little.
			p.log.WarnContext(ctx, "touch session", "session", sess.ID, "error", err)
		}
		c.Set(sessionKey, sess)
		c.Set(personKey, person)
	}
	c.Next()
}

// CurrentPerson is who is signed in (a member or a guest, with their
// organisation), or nil. Its Actor() is whom actions are recorded for.
func CurrentPerson(c *gin.Context) *accounts.Person {
	if v, ok := c.Get(personKey); ok {
		return v.(*accounts.Person)
	}
	return nil
}

// currentActor is the signed-in person as the services take who acts.
func currentActor(c *gin.Context) accounts.Actor { return CurrentPerson(c).Actor() }

func currentSession(c *gin.Context) *accounts.Session {
	if v, ok := c.Get(sessionKey); ok {
		return v.(*accounts.Session)
	}
	return nil
}

// RequireSignIn sends a signed-out visitor to the sign-in page, which
// brings them back to the page they asked for.
func RequireSignIn(c *gin.Context) {
	if CurrentPerson(c) != nil {
		c.Next()
		return
	}
	target := "/signin"
	if c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead {
		target += "?next=" + url.QueryEscape(c.Request.URL.RequestURI())
	}
	c.Redirect(http.StatusSeeOther, target)
	c.Abort()
}

// cookieName is the name the cookie called name goes by: with the
// __Host- prefix whenever cookies are Secure, plain over http:// (dev),
// where browsers refuse the prefix. Every cookie is set, read and cleared
// under this name.
func (p *Pages) cookieName(name string) string {
	if p.secure {
		return hostPrefix + name
	}
	return name
}

// cookie reads one of our cookies, under the name cookieName gives it.
func (p *Pages) cookie(c *gin.Context, name string) (string, error) {
	return c.Cookie(p.cookieName(name))
}

// setCookie writes one of our cookies with the flags they all share
// (Path=/ and no Domain, as the __Host- prefix demands). A zero expires
// makes a browser-session cookie; an empty value deletes.
func (p *Pages) setCookie(c *gin.Context, name, value string, expires time.Time) {
	ck := &http.Cookie{Name: p.cookieName(name), Value: value, Path: "/", Expires: expires,
		HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode}
	switch {
	case value == "":
		ck.MaxAge = -1
	case !expires.IsZero():
		// Max-Age as well, so a client whose clock is off keeps it as long.
		ck.MaxAge = int(time.Until(expires).Round(time.Second) / time.Second)
	}
	http.SetCookie(c.Writer, ck)
}

// startSession signs person in, replacing this browser's session if any,
// and goes on to next: the end of every way of signing in.
func (p *Pages) startSession(c *gin.Context, person *accounts.Person, next string) {
	ctx := c.Request.Context()
	if old := currentSession(c); old != nil {
		if err := p.accounts.DeleteSession(ctx, old.OrganizationID, old.ID); err != nil {
			p.Fail(c, err)
			return
		}
	}
	sess, token, err := p.accounts.CreateSession(ctx, person.Organization.ID, person.ID())
	if err != nil {
		p.Fail(c, err)
		return
	}
	p.setCookie(c, SessionCookie, token, sess.ExpiresAt)
	c.Redirect(http.StatusSeeOther, next)
}
