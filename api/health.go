package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/buildinfo"
)

// healthz says the process is up; it checks nothing else.
func (h *handlers) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz checks the database and Temporal, names what is down, and says
// the process's version.
func (h *handlers) readyz(c *gin.Context) {
	r := h.instance.Ready(c.Request.Context())
	if !r.Ready {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "checks": r.Checks, "version": buildinfo.Version()})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": r.Checks, "version": buildinfo.Version()})
}
