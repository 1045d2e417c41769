package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"gorm.io/gorm"
)

// IdempotencyTTL is how long a key is kept, after which it is swept.
const IdempotencyTTL = 24 * time.Hour

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

// InsertIdempotencyKey writes a new claim of c's key, leased until
// lockedUntil; a key already claimed is ErrDuplicate.
func (s *IdempotencyStore) InsertIdempotencyKey(ctx context.Context, c *Claim, lockedUntil time.Time) error {
	now := Now()
	row := IdempotencyKey{OrganizationID: c.OrganizationID, PrincipalID: c.PrincipalID, Key: c.Key,
		RequestHash: c.RequestHash, LockedUntil: lockedUntil, ExpiresAt: now.Add(IdempotencyTTL)}
	return duplicateOf(s.conn(ctx).Create(&row).Error)
}

// IdempotencyKeyOf reads c's key as stored, its response opened; nil when
// there is none.
func (s *IdempotencyStore) IdempotencyKeyOf(ctx context.Context, c *Claim) (*IdempotencyKey, error) {
	var prev IdempotencyKey
	if err := c.where(s.conn(ctx)).Take(&prev).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, nil
		}
		return nil, err
	}
	if prev.Completed {
		body, err := s.open(colIdempotentResponse, string(prev.ResponseBody), prev.OrganizationID, prev.PrincipalID, prev.Key)
		if err != nil {
			return nil, err
		}
		prev.ResponseBody = []byte(body)
	}
	return &prev, nil
}

// ForgetIdempotencyKey deletes prev, c's key as it was read, unless
// another attempt has replaced it since.
func (s *IdempotencyStore) ForgetIdempotencyKey(ctx context.Context, c *Claim, prev *IdempotencyKey) error {
	return c.where(s.conn(ctx)).Where("created_at = ?", prev.CreatedAt).Delete(&IdempotencyKey{}).Error
}

// TakeIdempotencyLease moves the lease of c's unfinished key from was (as
// read) to until, and reports whether this call moved it: of racing
// retries, one does.
func (s *IdempotencyStore) TakeIdempotencyLease(ctx context.Context, c *Claim, was, until time.Time) (bool, error) {
	res := c.where(s.conn(ctx).Model(&IdempotencyKey{})).Where("completed = ? AND locked_until = ?", false, was).
		Update("locked_until", until)
	return res.RowsAffected == 1, res.Error
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

// UnbindClaims frees, in ctx's transaction, the claims bound to a record
// being taken back, so a retry with the same key creates afresh.
func (s *IdempotencyStore) UnbindClaims(ctx context.Context, orgID, id string) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return st.tx.Model(&IdempotencyKey{}).Where("organization_id = ? AND resource_id = ?", orgID, id).
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

// RenewIdempotencyKey extends the lease of c's running attempt to until.
func (s *IdempotencyStore) RenewIdempotencyKey(ctx context.Context, c *Claim, until time.Time) error {
	return c.where(s.db.WithContext(ctx).Model(&IdempotencyKey{})).Where("completed = ?", false).
		Update("locked_until", until).Error
}

// PurgeExpiredIdempotencyKeys deletes keys past their lifetime.
func (s *IdempotencyStore) PurgeExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", Now()).Delete(&IdempotencyKey{})
	return res.RowsAffected, res.Error
}
