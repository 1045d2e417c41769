package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
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
// replay gets the first response byte for byte. Only responses below 400
// are kept; bodies are compared as canonical JSON. It runs after the route's
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
		target := c.Request.Method + " " + c.Request.URL.Path + "\n"
		claim := &models.Claim{OrganizationID: p.Organization.ID, PrincipalID: p.Key.ID, Key: key,
			RequestHash: digest(target, canonicalJSON(rawBody(c))), RawHash: digest(target, rawBody(c))}
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
			if !rec.Written() || status >= 400 {
				// A refusal (4xx) did nothing, so the caller may fix the
				// request and send it again with the same key; a failure
				// (5xx) may be retried with it. A claim already bound to a
				// record stays (ReleaseIdempotencyKey).
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

// digest hashes a request: its method and path, then its body.
func digest(target string, body []byte) string {
	sum := sha256.Sum256(append([]byte(target), body...))
	return hex.EncodeToString(sum[:])
}

// canonicalJSON is body with its keys sorted and no insignificant space,
// so a retry that sends the same JSON differently laid out is the same
// request. Numbers keep their spelling. A body that is not one JSON value
// is hashed as sent.
func canonicalJSON(body []byte) []byte {
	if len(bytes.TrimSpace(body)) == 0 {
		return []byte("{}") // bind reads an empty body as {}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	if _, err := dec.Token(); err != io.EOF {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
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
