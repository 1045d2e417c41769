package api

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/idempotency"
)

// claimKey is where the idempotency middleware leaves the request's claim.
const claimKey = "assent.claim"

// awaitKey is how long a request waits for another attempt of its key
// that is still running: longer than a lapsed lease, so that a retry
// after a crash takes the key up rather than being told to come back.
const awaitKey = 10 * time.Second

// idempotent makes a POST with an Idempotency-Key run once per caller
// (idempotency.Service): a replay gets the first response byte for byte.
// It runs after the route's authorisation, so a replay never reaches a
// caller the route refuses, and a key belongs to the API key or token
// that sent it. Two attempts of one key never run at once: the second
// waits for the first's outcome (409 idempotency_in_progress if it runs
// on). On a resumable route an attempt that never finished (its process
// died) does not block the key: once its lease lapses the retry runs
// again and converges on the first attempt's outcome.
func (h *handlers) idempotent(resumable bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		key := c.GetHeader(idempotency.Header)
		if c.Request.Method != http.MethodPost || key == "" {
			c.Next()
			return
		}
		ctx := c.Request.Context()
		p := Principal(c)
		claim, prev, err := h.idempotency.Await(ctx, idempotency.Request{OrganizationID: p.Organization.ID, PrincipalID: p.Key.ID,
			Key: key, Method: c.Request.Method, Path: c.Request.URL.Path, Body: rawBody(c)}, resumable, awaitKey)
		if err != nil {
			Fail(c, err)
			return
		}
		if prev != nil {
			c.Header("Idempotency-Replayed", "true")
			if prev.Location != "" {
				c.Header("Location", prev.Location)
			}
			// Written without a Content-Length, so jsonNewline ends it
			// as it ended the first answer.
			c.Header("Content-Type", prev.ContentType)
			c.Status(prev.StatusCode)
			_, _ = c.Writer.Write(prev.ResponseBody)
			c.Abort()
			return
		}
		c.Set(claimKey, claim)

		rec := &recordingWriter{ResponseWriter: c.Writer}
		c.Writer = rec
		release := h.idempotency.Hold(ctx, claim)
		// Settle the claim even if the client went away or the handler panicked.
		defer func() {
			release()
			var r *idempotency.Response
			if rec.Written() {
				r = &idempotency.Response{Status: rec.Status(), ContentType: rec.Header().Get("Content-Type"),
					Location: rec.Header().Get("Location"), Body: rec.body.Bytes()}
			}
			if err := h.idempotency.Settle(context.WithoutCancel(ctx), claim, r); err != nil {
				h.log.Error("settle the idempotency claim", "error", err)
			}
		}()
		c.Next()
		// Write a handler's error now, so the stored response includes it.
		flushError(c, h.log)
	}
}

// Claim is the request's Idempotency-Key claim, nil without a key.
func Claim(c *gin.Context) *idempotency.Claim {
	if v, ok := c.Get(claimKey); ok {
		return v.(*idempotency.Claim)
	}
	return nil
}

// recordingWriter keeps a copy of the response body.
type recordingWriter struct {
	gin.ResponseWriter
	body bytes.Buffer
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recordingWriter) WriteString(s string) (int, error) {
	w.body.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}
