package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// healthz says the process is up; it checks nothing else.
func (h *handlers) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz checks the database and Temporal and names what is down.
func (h *handlers) readyz(c *gin.Context) {
	r := h.instance.Ready(c.Request.Context())
	if !r.Ready {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "checks": r.Checks})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": r.Checks})
}
