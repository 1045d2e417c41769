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
	"errors"
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

// Lifetimes of an unfinished attempt's hold on its key.
const (
	// lease is how long an unfinished attempt holds its key without
	// renewing it. A running attempt renews it every Renew, so only an
	// attempt whose process died lets it lapse, and then, soon after, a
	// retry takes the key up.
	lease = 5 * time.Second
	Renew = 2 * time.Second
)

// Store is what the service reads and writes its claims through.
type Store interface {
	InsertIdempotencyKey(ctx context.Context, c *models.Claim, lockedUntil time.Time) error
	IdempotencyKeyOf(ctx context.Context, c *models.Claim) (*models.IdempotencyKey, error)
	ForgetIdempotencyKey(ctx context.Context, c *models.Claim, prev *models.IdempotencyKey) error
	TakeIdempotencyLease(ctx context.Context, c *models.Claim, was, until time.Time) (bool, error)
	RenewIdempotencyKey(ctx context.Context, c *models.Claim, until time.Time) error
	CompleteIdempotencyKey(ctx context.Context, c *models.Claim, status int, contentType, location string, body []byte) error
	ReleaseIdempotencyKey(ctx context.Context, c *models.Claim) error
}

// Service claims and settles keys.
type Service struct {
	store Store
}

// New returns the service.
func New(store Store) *Service {
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
	prev, err := s.ClaimKey(ctx, c, resumable)
	if err != nil {
		return nil, nil, err
	}
	if prev != nil {
		return nil, prev, nil
	}
	return c, nil, nil
}

// ClaimKey claims c's key for its request: nil when the caller should run
// it, the stored response when the request already ran (a replay), or a
// 409/422 error. The key's primary key makes the claim atomic across
// processes.
//
// An attempt still running (its lease held) blocks the key with 409
// idempotency_in_progress, so two attempts of one key never run at once.
// Once an unfinished attempt's lease has lapsed (its process died), one
// retry takes the key up: on a resumable route it runs the request again
// with c.Resumed set, converging on the first attempt's outcome (a create
// bound to its claim, models.BindClaim, or an Update under c.UpdateID); on
// another route a key bound to nothing is forgotten and the request runs
// afresh.
func (s *Service) ClaimKey(ctx context.Context, c *models.Claim, resumable bool) (*models.IdempotencyKey, error) {
	for range 3 {
		now := models.Now()
		err := s.store.InsertIdempotencyKey(ctx, c, now.Add(lease))
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, models.ErrDuplicate) {
			return nil, err
		}
		prev, err := s.store.IdempotencyKeyOf(ctx, c)
		if err != nil {
			return nil, err
		}
		if prev == nil {
			continue // released between our insert and read
		}
		if now.After(prev.ExpiresAt) || (!prev.Completed && !resumable && now.After(prev.LockedUntil) && prev.ResourceID == "") {
			if err := s.store.ForgetIdempotencyKey(ctx, c, prev); err != nil {
				return nil, err
			}
			continue
		}
		if prev.RequestHash != c.RequestHash {
			if c.RawHash == "" || prev.RequestHash != c.RawHash {
				return nil, apperr.New(apperr.IdempotencyReused, "Idempotency-Key %q was used with a different request", c.Key)
			}
			c.RequestHash = prev.RequestHash // so UpdateID is the first attempt's
		}
		if prev.Completed {
			return prev, nil
		}
		if resumable && !now.Before(prev.LockedUntil) {
			// One retry takes the lapsed lease: whoever moves it first.
			took, err := s.store.TakeIdempotencyLease(ctx, c, prev.LockedUntil, now.Add(lease))
			if err != nil {
				return nil, err
			}
			if took {
				c.Resumed = true
				return nil, nil
			}
			continue
		}
		return nil, inFlight(c)
	}
	return nil, inFlight(c)
}

func inFlight(c *models.Claim) error {
	return apperr.New(apperr.IdempotencyInFlight, "a request with Idempotency-Key %q is still running", c.Key)
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
		t := time.NewTicker(Renew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A renewal missed is retried at the next tick; the lease
				// outlasts two of them.
				_ = s.store.RenewIdempotencyKey(ctx, c, models.Now().Add(lease))
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
