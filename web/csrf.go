package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/randtoken"
)

const (
	// CSRFField is the form field every form carries; Render puts the
	// token in View.CSRF.
	CSRFField = "csrf"
	// csrfCookie holds the token of a visitor not signed in yet
	// (double-submit), so the sign-in forms are protected too.
	csrfCookie = "assent_csrf"
	csrfKey    = "assent.web.csrf"
	// csrfLifetime is how long a pre-session token works; a page renewed
	// past half of it gets a fresh one, so a form shown always has at
	// least half of it left.
	csrfLifetime = 12 * time.Hour
	// csrfMACLabel keeps these MACs apart from anything else the signing
	// key may sign.
	csrfMACLabel = "assent/web/csrf/v1\x00"
	// maxCSRFToken bounds what is MAC'd from a cookie.
	maxCSRFToken = 200
)

// csrfToken is the token forms must carry: the session's CSRF secret when
// signed in, else the double-submit cookie's value, set here when missing,
// invalid or past half its life.
func (p *Pages) csrfToken(c *gin.Context) string {
	if s := currentSession(c); s != nil {
		return s.CSRFSecret
	}
	if t := c.GetString(csrfKey); t != "" {
		return t
	}
	if t, expires, ok := p.csrfCookieToken(c); ok && time.Until(expires) > csrfLifetime/2 {
		return t
	}
	expires := time.Now().Add(csrfLifetime)
	t := p.signCSRF(randtoken.New(), expires)
	p.setCookie(c, csrfCookie, t, expires)
	c.Set(csrfKey, t)
	return t
}

// expectedCSRF is the token this request's form must carry; empty when
// the visitor has none yet, or only one this server did not sign or that
// has expired.
func (p *Pages) expectedCSRF(c *gin.Context) string {
	if s := currentSession(c); s != nil {
		return s.CSRFSecret
	}
	if t := c.GetString(csrfKey); t != "" {
		return t
	}
	if t, _, ok := p.csrfCookieToken(c); ok {
		return t
	}
	return ""
}

// csrfCookieToken is the double-submit cookie's token and its expiry, if
// this server signed it and it has not expired. The signature is what
// makes the cookie worth comparing: a cookie planted by someone else (a
// sibling subdomain, a network attacker) would otherwise match any form
// they also wrote.
func (p *Pages) csrfCookieToken(c *gin.Context) (string, time.Time, bool) {
	t, err := p.cookie(c, csrfCookie)
	if err != nil || len(t) > maxCSRFToken {
		return "", time.Time{}, false
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 || len(parts[0]) < 32 {
		return "", time.Time{}, false
	}
	if !hmac.Equal([]byte(parts[2]), []byte(p.csrfMAC(parts[0]+"."+parts[1]))) {
		return "", time.Time{}, false
	}
	unix, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || time.Now().Unix() >= unix {
		return "", time.Time{}, false
	}
	return t, time.Unix(unix, 0), true
}

// signCSRF makes a pre-session token: random, its expiry, and their MAC
// under the server's signing key.
func (p *Pages) signCSRF(random string, expires time.Time) string {
	body := random + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + p.csrfMAC(body)
}

func (p *Pages) csrfMAC(body string) string {
	m := hmac.New(sha256.New, p.signingKey)
	m.Write([]byte(csrfMACLabel))
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CSRF refuses every request that can change something (anything but GET,
// HEAD and OPTIONS) unless its form carries the token, with 403 and a page
// that says what to do.
func (p *Pages) CSRF(c *gin.Context) {
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		c.Next()
		return
	}
	want, got := p.expectedCSRF(c), c.PostForm(CSRFField)
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		p.Render(c, http.StatusForbidden, "error", Problem{Title: "This form has expired",
			Message:    "The form was sent without a valid security token: it may be from an older page, another site, or a session that has ended. Nothing was changed.",
			Retry:      "/",
			RetryLabel: "Start again"})
		c.Abort()
		return
	}
	c.Next()
}
