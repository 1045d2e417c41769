package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/metrics"
)

// countRequests counts every request answered by its route's template,
// never its path, so ids make no label values.
func countRequests(m *metrics.Metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		rerouted := c.Request.Context().Value(reroutedKey{}) != nil
		c.Next()
		if !rerouted && c.Request.Context().Value(reroutedKey{}) != nil {
			return // routed again (unencodedSlug): that pass counted it
		}
		m.HTTPRequest(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
	}
}

// Probes is what a process without the API serves (the worker): /healthz
// and /readyz, answered as the API answers them, and metrics at
// /metrics unless nil.
func Probes(log *slog.Logger, inst *instance.Service, metricsHandler http.Handler) http.Handler {
	h := &handlers{log: log, instance: inst}
	r := gin.New()
	r.Use(jsonNewline, errorsMiddleware(log))
	r.NoRoute(noRoute)
	r.GET("/healthz", h.healthz)
	r.GET("/readyz", h.readyz)
	if metricsHandler != nil {
		r.GET(metrics.Path, gin.WrapH(metricsHandler))
	}
	return r
}
