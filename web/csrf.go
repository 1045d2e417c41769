package web

import (
	"crypto/subtle"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/models"
)

const (
	// CSRFField is the form field every form carries; Render puts the
	// token in View.CSRF.
	CSRFField = "csrf"
	// csrfCookie holds the token of a visitor not signed in yet
	// (double-submit), so the sign-in forms are protected too.
	csrfCookie = "assent_csrf"
	csrfKey    = "assent.web.csrf"
)

// csrfToken is the token forms must carry: the session's CSRF secret when
// signed in, else the double-submit cookie's value, set here when missing.
func (p *Pages) csrfToken(c *gin.Context) string {
	if t := expectedCSRF(c); t != "" {
		return t
	}
	t := models.NewToken()
	p.setCookie(c, csrfCookie, t, noExpiry)
	c.Set(csrfKey, t)
	return t
}

// expectedCSRF is the token this request's form must carry; empty when
// the visitor has none yet.
func expectedCSRF(c *gin.Context) string {
	if s := currentSession(c); s != nil {
		return s.CSRFSecret
	}
	if t := c.GetString(csrfKey); t != "" {
		return t
	}
	if t, err := c.Cookie(csrfCookie); err == nil && len(t) >= 32 {
		return t
	}
	return ""
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
	want, got := expectedCSRF(c), c.PostForm(CSRFField)
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(got)) != 1 {
		p.Render(c, http.StatusForbidden, "error", problem{Title: "This form has expired",
			Message:    "The form was sent without a valid security token: it may be from an older page, another site, or a session that has ended. Nothing was changed.",
			Retry:      "/",
			RetryLabel: "Start again"})
		c.Abort()
		return
	}
	c.Next()
}
