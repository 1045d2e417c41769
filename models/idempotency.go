package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
)

// Idempotency-Key lifetimes.
const (
	IdempotencyTTL = 24 * time.Hour
	// idempotencyLease is how long an unfinished attempt holds its key
	// without renewing it. A running attempt renews it every
	// IdempotencyRenew, so only an attempt whose process died lets it
	// lapse, and then, soon after, a retry takes the key up.
	idempotencyLease = 5 * time.Second
	IdempotencyRenew = 2 * time.Second
)

// Claim is one caller's Idempotency-Key: bound to the organisation, to the
// key (API key or member token) that sent it and to the request it came
// with, so nobody else's request can ever match it.
type Claim struct {
	OrganizationID string
	PrincipalID    string
	Key            string
	// RequestHash digests the method, path and body (as canonical JSON).
	RequestHash string
	// RawHash digests the body as sent, as keys stored before bodies were
	// canonicalised were hashed: such a key still matches its retry.
	RawHash string
	// Resumed is set when an earlier attempt with this key never finished
	// (its process died) and this one takes it up.
	Resumed bool
}

// UpdateID is the Temporal Update id of the claimed request: the same for
// every retry of it, so Temporal applies it once and answers each retry
// with the first outcome; nobody else's request can share it. Nil claims
// have none (Temporal makes one).
func (c *Claim) UpdateID() string {
	if c == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(c.OrganizationID + "\n" + c.PrincipalID + "\n" + c.Key + "\n" + c.RequestHash))
	return "idem-" + hex.EncodeToString(sum[:16])
}

func (c *Claim) where(db *gorm.DB) *gorm.DB {
	return db.Where("organization_id = ? AND principal_id = ? AND idempotency_key = ?", c.OrganizationID, c.PrincipalID, c.Key)
}

// ClaimIdempotencyKey reserves c's key. It returns the stored response when
// the request already ran (a replay), nil when the caller should run it, or
// a 409/422 error. The primary key makes the claim atomic across processes.
//
// An attempt still running (its lease held) blocks the key with 409
// idempotency_in_progress, so two attempts of one key never run at once.
// Once an unfinished attempt's lease has lapsed (its process died), one
// retry takes the key up: on a resumable route it runs the request again
// with c.Resumed set, converging on the first attempt's outcome (a create
// bound to its claim, BindClaim, or an Update under c.UpdateID); on
// another route a key bound to nothing is forgotten and the request runs
// afresh.
func (s *IdempotencyStore) ClaimIdempotencyKey(ctx context.Context, c *Claim, resumable bool) (*IdempotencyKey, error) {
	db := s.db.WithContext(ctx)
	for attempt := 0; attempt < 3; attempt++ {
		now := Now()
		row := IdempotencyKey{OrganizationID: c.OrganizationID, PrincipalID: c.PrincipalID, Key: c.Key,
			RequestHash: c.RequestHash, LockedUntil: now.Add(idempotencyLease), ExpiresAt: now.Add(IdempotencyTTL)}
		err := db.Create(&row).Error
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, err
		}
		var prev IdempotencyKey
		if err := c.where(db).Take(&prev).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				continue // released between our insert and read
			}
			return nil, err
		}
		if now.After(prev.ExpiresAt) || (!prev.Completed && !resumable && now.After(prev.LockedUntil) && prev.ResourceID == "") {
			if err := c.where(db).Where("created_at = ?", prev.CreatedAt).Delete(&IdempotencyKey{}).Error; err != nil {
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
			body, err := s.open(colIdempotentResponse, string(prev.ResponseBody), prev.OrganizationID, prev.PrincipalID, prev.Key)
			if err != nil {
				return nil, err
			}
			prev.ResponseBody = []byte(body)
			return &prev, nil
		}
		if resumable && !now.Before(prev.LockedUntil) {
			// One retry takes the lapsed lease: whoever moves it first.
			res := c.where(db.Model(&IdempotencyKey{})).Where("completed = ? AND locked_until = ?", false, prev.LockedUntil).
				Update("locked_until", now.Add(idempotencyLease))
			if res.Error != nil {
				return nil, res.Error
			}
			if res.RowsAffected == 1 {
				c.Resumed = true
				return nil, nil
			}
			continue
		}
		return nil, apperr.New(apperr.IdempotencyInFlight, "a request with Idempotency-Key %q is still running", c.Key)
	}
	return nil, apperr.New(apperr.IdempotencyInFlight, "a request with Idempotency-Key %q is still running", c.Key)
}

// BindClaim records, inside tx (the transaction that inserts the record),
// that c's request made the record id: the record and its claim are
// written together or not at all. When an earlier attempt already bound
// the claim, it returns that record's id, and the caller must roll back
// and use that record instead.
func BindClaim(tx *gorm.DB, c *Claim, id string) (earlier string, err error) {
	if c == nil {
		return "", nil
	}
	res := c.where(tx.Model(&IdempotencyKey{})).Where("resource_id = ?", "").Update("resource_id", id)
	if res.Error != nil || res.RowsAffected == 1 {
		return "", res.Error
	}
	var prev IdempotencyKey
	if err := c.where(tx).Take(&prev).Error; err != nil {
		return "", err
	}
	if prev.ResourceID == "" {
		return "", errors.New("idempotency claim vanished while its request ran")
	}
	return prev.ResourceID, nil
}

// errRollback ends a transaction that must write nothing.
var errRollback = errors.New("rolled back")

// unbindClaims frees the claims bound to a record being deleted.
func unbindClaims(tx *gorm.DB, orgID, id string) error {
	return tx.Model(&IdempotencyKey{}).Where("organization_id = ? AND resource_id = ?", orgID, id).
		Update("resource_id", "").Error
}

// ClaimedResource is the id of the record an earlier attempt of c's request
// made, or "" when there is none.
func (s *IdempotencyStore) ClaimedResource(ctx context.Context, c *Claim) (string, error) {
	if c == nil || !c.Resumed {
		return "", nil
	}
	var prev IdempotencyKey
	err := c.where(s.db.WithContext(ctx)).Take(&prev).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return prev.ResourceID, err
}

// CompleteIdempotencyKey stores the response replays will return, sealed:
// it may carry a secret shown once (a key, a callback secret).
func (s *IdempotencyStore) CompleteIdempotencyKey(ctx context.Context, c *Claim, status int, contentType, location string, body []byte) error {
	sealed := []byte(s.seal(colIdempotentResponse, string(body), c.OrganizationID, c.PrincipalID, c.Key))
	return c.where(s.db.WithContext(ctx).Model(&IdempotencyKey{})).
		Updates(map[string]any{"completed": true, "status_code": status, "content_type": contentType, "location": location, "response_body": sealed}).Error
}

// ReleaseIdempotencyKey forgets an unfinished claim whose request failed
// without effect, so the client may retry with the same key. A claim bound
// to a record stays, its lease ended: the retry resumes that record at
// once instead of making a second one.
func (s *IdempotencyStore) ReleaseIdempotencyKey(ctx context.Context, c *Claim) error {
	db := s.db.WithContext(ctx)
	if err := c.where(db).Where("completed = ? AND resource_id = ?", false, "").Delete(&IdempotencyKey{}).Error; err != nil {
		return err
	}
	return c.where(db.Model(&IdempotencyKey{})).Where("completed = ?", false).Update("locked_until", Now()).Error
}

// RenewIdempotencyKey extends the lease of c's running attempt.
func (s *IdempotencyStore) RenewIdempotencyKey(ctx context.Context, c *Claim) error {
	return c.where(s.db.WithContext(ctx).Model(&IdempotencyKey{})).Where("completed = ?", false).
		Update("locked_until", Now().Add(idempotencyLease)).Error
}

// PurgeExpiredIdempotencyKeys deletes keys past their lifetime.
func (s *IdempotencyStore) PurgeExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", Now()).Delete(&IdempotencyKey{})
	return res.RowsAffected, res.Error
}
