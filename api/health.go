package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/models"
)

// healthz says the process is up; it checks nothing else.
func (h *handlers) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// readyz checks the database and Temporal and names what is down.
func (h *handlers) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "temporal": "ok"}
	ready := true
	if err := models.Ping(ctx, h.store.DB()); err != nil {
		checks["database"] = "down: " + err.Error()
		ready = false
	}
	if h.temporal == nil {
		checks["temporal"] = "down: no client configured"
		ready = false
	} else if _, err := h.temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		checks["temporal"] = "down: " + err.Error()
		ready = false
	}
	if !ready {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "checks": checks})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready", "checks": checks})
}
