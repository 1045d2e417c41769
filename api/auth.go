package api

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/apperr"
)

const principalKey = "assent.principal"

// authenticate resolves the bearer key to a principal or refuses with 401.
func (h *handlers) authenticate(c *gin.Context) {
	header := c.GetHeader("Authorization")
	scheme, secret, _ := strings.Cut(header, " ")
	var p accounts.Actor
	var err error
	if header != "" && !strings.EqualFold(scheme, "Bearer") {
		// Most often the key itself, sent without its scheme.
		err = apperr.New(apperr.Unauthorized, `the Authorization header must be "Bearer " followed by the key`)
	} else {
		p, err = h.accounts.Authenticate(c.Request.Context(), strings.TrimSpace(secret))
	}
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="assent"`)
		if c.Request.ContentLength != 0 {
			// Answer now: without this the server would first wait for
			// the unread body, which a slow client never finishes.
			c.Header("Connection", "close")
		}
		Fail(c, err)
		return
	}
	c.Set(principalKey, p)
	c.Next()
}

func Principal(c *gin.Context) accounts.Actor {
	return c.MustGet(principalKey).(accounts.Actor)
}

// RequireScope refuses keys that lack scope, naming it.
func RequireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := Principal(c)
		if p.HasScope(scope) {
			c.Next()
			return
		}
		if p.Key.Kind == admin.KeyAdmin {
			// Admin keys carry no scopes: "lacks the scope" would send the
			// caller looking for one to add.
			Fail(c, apperr.New(apperr.InsufficientScope, "an admin key manages the organisation and cannot use this endpoint; use an agent key with the scope %s (or a member token)", scope))
			return
		}
		Fail(c, apperr.New(apperr.InsufficientScope, "this key lacks the scope %s", scope))
	}
}

// PersonActs admits a member token to act as its person (decide, ask,
// reply, give a verdict) only when it carries scope: a token minted to
// read never acts. Keys pass on, and the handler or workflow refuses them
// as no person.
func PersonActs(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if p := Principal(c); p.Member() != nil && !p.HasScope(scope) {
			Fail(c, apperr.New(apperr.InsufficientScope, "this token lacks the scope %s, so it cannot act as its person here", scope))
			return
		}
		c.Next()
	}
}

// requireAdmin admits admin keys only.
func requireAdmin(c *gin.Context) {
	if Principal(c).Key.Kind != admin.KeyAdmin {
		Fail(c, apperr.New(apperr.Forbidden, "this endpoint needs an admin key"))
		return
	}
	c.Next()
}
