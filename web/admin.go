package web

import "github.com/gin-gonic/gin"

// mountAdmin adds the admin pages for owners and administrators.
func (p *Pages) mountAdmin(g *gin.RouterGroup) {}
