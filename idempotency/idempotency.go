// Package idempotency runs a POST sent with an Idempotency-Key once per
// caller. A claim binds the key to the organisation, to the API key or
// token that sent it and to a digest of the request; a replay gets the
// first response byte for byte; a refusal or failure releases the key;
// and on a resumable route an attempt whose process died does not block
// its retry, which converges on the first attempt's outcome (a create
// bound to its claim, models.BindClaim, or an Update under
// models.Claim.UpdateID). The API's middleware is its one caller.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"time"
	"unicode"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Header names the key a caller sends to run a POST once.
const Header = "Idempotency-Key"

// maxKey bounds a key's length.
const maxKey = 255

// Service claims and settles keys.
type Service struct {
	store *models.IdempotencyStore
}

// New returns the service.
func New(store *models.IdempotencyStore) *Service {
	return &Service{store: store}
}

// Request is one request sent with an Idempotency-Key.
type Request struct {
	OrganizationID string
	// PrincipalID is the API key or member token that sent it.
	PrincipalID string
	Key         string
	Method      string
	Path        string
	Body        []byte
}

// Claim reserves r's key for r. It returns the claim, which the request
// runs under, or the stored response when the request already ran (a
// replay; then no claim). A key of another request is
// idempotency_key_reused; one whose first attempt is still running is
// idempotency_in_progress, unless resumable: then that attempt's process
// is taken to have died, the request runs again and the claim is Resumed.
// An unfinished attempt on a route that is not resumable blocks its key
// for two minutes.
func (s *Service) Claim(ctx context.Context, r Request, resumable bool) (*models.Claim, *models.IdempotencyKey, error) {
	if r.Key == "" || len(r.Key) > maxKey || !printable(r.Key) {
		return nil, nil, apperr.Field(apperr.InvalidRequest, Header, "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	target := r.Method + " " + r.Path + "\n"
	c := &models.Claim{OrganizationID: r.OrganizationID, PrincipalID: r.PrincipalID, Key: r.Key,
		RequestHash: digest(target, canonicalJSON(r.Body)), RawHash: digest(target, r.Body)}
	prev, err := s.store.ClaimIdempotencyKey(ctx, c, resumable)
	if err != nil {
		return nil, nil, err
	}
	if prev != nil {
		return nil, prev, nil
	}
	return c, nil, nil
}

// awaitPoll is how often Await looks again at a key another attempt holds.
const awaitPoll = 50 * time.Millisecond

// Await is Claim for a request that may meet another attempt of its key
// still running: it waits up to wait for that attempt to finish, then
// answers as Claim does once it has (a replay of its response; a claim to
// run when it was refused, or when its process died and its lease
// lapsed), or idempotency_in_progress when it is still running.
func (s *Service) Await(ctx context.Context, r Request, resumable bool, wait time.Duration) (*models.Claim, *models.IdempotencyKey, error) {
	deadline := time.Now().Add(wait)
	for {
		c, prev, err := s.Claim(ctx, r, resumable)
		if !apperr.Is(err, apperr.IdempotencyInFlight) || time.Now().Add(awaitPoll).After(deadline) {
			return c, prev, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, err
		case <-time.After(awaitPoll):
		}
	}
}

// Hold keeps c's lease while its request runs, renewing it until the
// returned stop is called (before Settle).
func (s *Service) Hold(ctx context.Context, c *models.Claim) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(models.IdempotencyRenew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A renewal missed is retried at the next tick; the lease
				// outlasts two of them.
				_ = s.store.RenewIdempotencyKey(ctx, c)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Response is what a claimed request answered.
type Response struct {
	Status      int
	ContentType string
	// Location is the response's Location header, if any.
	Location string
	Body     []byte
}

// Settle ends c's attempt with its response, nil when it wrote none.
// Only a response below 400 is kept, sealed (it may carry a secret shown
// once), for replays. A refusal (4xx) did nothing, so the caller may fix
// the request and send it again with the same key; a failure (5xx), or no
// response, may be retried with it: both release the key, unless the
// claim is already bound to a record, whose retry resumes it.
func (s *Service) Settle(ctx context.Context, c *models.Claim, r *Response) error {
	if r == nil || r.Status >= 400 {
		return s.store.ReleaseIdempotencyKey(ctx, c)
	}
	return s.store.CompleteIdempotencyKey(ctx, c, r.Status, r.ContentType, r.Location, r.Body)
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
		return []byte("{}") // the API binds an empty body as {}
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

func printable(s string) bool {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
