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
	"github.com/assent-hq/assent/models"
)

// idempotencyHeader names the key a caller sends to run a POST once.
const idempotencyHeader = "Idempotency-Key"

// claimKey is where the idempotency middleware leaves the request's claim.
const claimKey = "assent.claim"

// idempotent makes a POST with an Idempotency-Key run once per caller: a
// replay gets the first response byte for byte. It runs after the route's
// authorisation, so a replay never reaches a caller the route refuses, and
// a key belongs to the API key or token that sent it.
//
// On a resumable route an attempt that never finished (its process died)
// does not block the key: the retry runs again and converges on the first
// attempt's outcome (see models.ClaimIdempotencyKey).
func (h *handlers) idempotent(resumable bool) gin.HandlerFunc {
	return func(c *gin.Context) {
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
		p := principal(c)
		sum := sha256.New()
		sum.Write([]byte(c.Request.Method + " " + c.Request.URL.Path + "\n"))
		sum.Write(rawBody(c))
		claim := &models.Claim{OrganizationID: p.Organization.ID, PrincipalID: p.Key.ID, Key: key,
			RequestHash: hex.EncodeToString(sum.Sum(nil))}
		prev, err := h.store.ClaimIdempotencyKey(ctx, claim, resumable)
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
		c.Set(claimKey, claim)

		rec := &recordingWriter{ResponseWriter: c.Writer}
		c.Writer = rec
		// Settle the claim even if the client went away or the handler panicked.
		defer func() {
			settle := context.WithoutCancel(ctx)
			status := rec.Status()
			if !rec.Written() || status >= 500 || status == http.StatusUnauthorized || status == http.StatusForbidden {
				// The server failed, so the request may be retried with the
				// key; a refusal is never replayed to a later, allowed call.
				_ = h.store.ReleaseIdempotencyKey(settle, claim)
				return
			}
			if err := h.store.CompleteIdempotencyKey(settle, claim, status, rec.Header().Get("Content-Type"), rec.body.Bytes()); err != nil {
				h.log.Error("store idempotent response", "error", err)
			}
		}()
		c.Next()
		// Write a handler's error now, so the stored response includes it.
		flushError(c, h.log)
	}
}

// claim is the request's Idempotency-Key claim, nil without a key.
func claim(c *gin.Context) *models.Claim {
	if v, ok := c.Get(claimKey); ok {
		return v.(*models.Claim)
	}
	return nil
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
