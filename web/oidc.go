package web

import "github.com/gin-gonic/gin"

// OIDCSettings configure optional single sign-on; nil turns it off.
type OIDCSettings struct{}

// mountOIDC adds the single sign-on routes when OIDC is configured.
func (p *Pages) mountOIDC(g *gin.RouterGroup) {}
