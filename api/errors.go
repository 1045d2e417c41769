package api

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/logging"
)

type errorEnvelope struct {
	Error *apperr.Error `json:"error"`
}

// writeError sends the error envelope. Only errors the caller cannot act on
// are logged, and their detail never leaves the server.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	e, ok := apperr.As(err)
	if !ok {
		log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method,
			"route", logging.Route(c), "error", err)
		e = apperr.New(apperr.Internal, "the server failed to handle the request; it has been logged")
	}
	if (e.Code == apperr.RateLimited || e.Code == apperr.Unavailable) && c.Writer.Header().Get("Retry-After") == "" {
		c.Header("Retry-After", strconv.Itoa(apperr.RetryAfter))
	}
	c.AbortWithStatusJSON(e.Status(), errorEnvelope{Error: e})
}

// errorsMiddleware writes the envelope for the last error a handler
// recorded with c.Error, and turns panics into 500s.
func errorsMiddleware(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				log.ErrorContext(c.Request.Context(), "panic", "route", logging.Route(c), "panic", r)
				if !c.Writer.Written() {
					writeError(c, log, errors.New("panic"))
				}
			}
		}()
		c.Next()
		flushError(c, log)
	}
}

// flushError writes the envelope for the last error a handler recorded,
// unless a response is already out.
func flushError(c *gin.Context, log *slog.Logger) {
	if len(c.Errors) > 0 && !c.Writer.Written() {
		writeError(c, log, c.Errors.Last().Err)
	}
}

// Fail records err for errorsMiddleware and stops the chain.
func Fail(c *gin.Context, err error) {
	_ = c.Error(err)
	c.Abort()
}
