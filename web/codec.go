package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
)

// CodecPath is where the Temporal UI decodes payloads (its codec
// endpoint): the UI posts to CodecPath + "/decode".
const CodecPath = "/temporal/codec"

// maxCodecBytes bounds one decode request: a history page's payloads.
const maxCodecBytes = 8 << 20

// CodecSettings let the Temporal UI show payloads in clear to operators.
type CodecSettings struct {
	// Decode is the payload codec's HTTP handler (decode only: nobody
	// needs this endpoint to make payloads the workflows accept).
	Decode http.Handler
	// UIOrigin is the Temporal UI's origin (scheme://host:port), the only
	// one allowed to call the endpoint from a browser.
	UIOrigin string
	// Operators are the emails of the members who run the instance; only
	// they, signed in, may decode (payloads of every organisation).
	Operators []string
	// Namespace is the Temporal namespace Assent's workflows run in, for
	// the System page's links into the UI.
	Namespace string
}

// WorkflowLink is the Temporal UI's list of the runs of workflow id, or ""
// when the UI's address is not known.
func (s *CodecSettings) WorkflowLink(id string) string {
	if s == nil || s.UIOrigin == "" || s.Namespace == "" {
		return ""
	}
	return strings.TrimSuffix(s.UIOrigin, "/") + "/namespaces/" + url.PathEscape(s.Namespace) + "/workflows?query=" +
		url.QueryEscape(`WorkflowId="`+id+`"`)
}

// mountCodec serves the codec endpoint: outside the page group, since the
// UI posts JSON without a form token, but behind an operator's session.
func (p *Pages) mountCodec(r *gin.Engine) {
	if p.codec == nil {
		return
	}
	g := r.Group(CodecPath, p.codecCORS, p.loadSession)
	g.OPTIONS("/decode", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	g.POST("/decode", p.decodePayloads)
}

// codecCORS answers the UI's origin, with credentials so that the
// operator's session cookie comes along; any other origin is refused.
func (p *Pages) codecCORS(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Origin")
	origin := c.GetHeader("Origin")
	if origin == "" {
		c.Next() // not from a browser page: the session decides
		return
	}
	if origin != p.codec.UIOrigin {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "this origin may not use the codec endpoint"})
		return
	}
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace")
	h.Set("Access-Control-Max-Age", "600")
	c.Next()
}

// decodePayloads decodes for a signed-in operator.
func (p *Pages) decodePayloads(c *gin.Context) {
	person := CurrentPerson(c)
	if person == nil {
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "sign in to Assent as an operator to see payloads in clear"})
		return
	}
	if !p.isOperator(person) {
		c.AbortWithStatusJSON(http.StatusForbidden, gin.H{"error": "only the instance's operators may see payloads in clear"})
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxCodecBytes)
	p.codec.Decode.ServeHTTP(c.Writer, c.Request)
}

func (p *Pages) isOperator(person *accounts.Person) bool {
	return person.Member != nil && slices.Contains(p.codec.Operators, accounts.NormalizeEmail(person.Member.Email))
}
