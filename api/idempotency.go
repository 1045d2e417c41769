package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"unicode"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
)

// idempotencyHeader names the key a caller sends to run a POST once.
const idempotencyHeader = "Idempotency-Key"

// idempotency makes a POST with an Idempotency-Key run once per
// organisation: a replay gets the first response byte for byte.
func (h *handlers) idempotency(c *gin.Context) {
	key := c.GetHeader(idempotencyHeader)
	if c.Request.Method != http.MethodPost || key == "" {
		c.Next()
		return
	}
	if len(key) > 255 || !printable(key) {
		fail(c, apperr.Field(apperr.InvalidRequest, "Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters"))
		return
	}
	ctx := c.Request.Context()
	orgID := principal(c).Organization.ID
	sum := sha256.New()
	sum.Write([]byte(c.Request.Method + " " + c.Request.URL.Path + "\n"))
	sum.Write(rawBody(c))
	prev, err := h.store.ClaimIdempotencyKey(ctx, orgID, key, hex.EncodeToString(sum.Sum(nil)))
	if err != nil {
		fail(c, err)
		return
	}
	if prev != nil {
		c.Header("Idempotency-Replayed", "true")
		c.Data(prev.StatusCode, prev.ContentType, prev.ResponseBody)
		c.Abort()
		return
	}

	rec := &recordingWriter{ResponseWriter: c.Writer}
	c.Writer = rec
	// Settle the claim even if the client went away or the handler panicked.
	defer func() {
		settle := context.WithoutCancel(ctx)
		status := rec.Status()
		if !rec.Written() || status >= 500 {
			// The server failed, so the request may be retried with the key.
			_ = h.store.ReleaseIdempotencyKey(settle, orgID, key)
			return
		}
		if err := h.store.CompleteIdempotencyKey(settle, orgID, key, status, rec.Header().Get("Content-Type"), rec.body.Bytes()); err != nil {
			h.log.Error("store idempotent response", "error", err)
		}
	}()
	c.Next()
	// Write a handler's error now, so the stored response includes it.
	flushError(c, h.log)
}

func printable(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
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
