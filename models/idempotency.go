package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
)

// Idempotency-Key lifetimes.
const (
	IdempotencyTTL = 24 * time.Hour
	// idempotencyLock bounds how long an attempt that never finished (its
	// process died) blocks retries with the same key.
	idempotencyLock = 2 * time.Minute
)

// ClaimIdempotencyKey reserves key for a request whose method, path and body
// hash to requestHash. It returns the stored response when the request
// already ran (a replay), nil when the caller should run it, or a 409/422
// error. The primary key makes the claim atomic across processes.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, orgID, key, requestHash string) (*IdempotencyKey, error) {
	db := s.db.WithContext(ctx)
	for attempt := 0; attempt < 3; attempt++ {
		now := Now()
		row := IdempotencyKey{OrganizationID: orgID, Key: key, RequestHash: requestHash,
			LockedUntil: now.Add(idempotencyLock), ExpiresAt: now.Add(IdempotencyTTL)}
		err := db.Create(&row).Error
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, err
		}
		var prev IdempotencyKey
		if err := db.Where("organization_id = ? AND idempotency_key = ?", orgID, key).Take(&prev).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				continue // released between our insert and read
			}
			return nil, err
		}
		stale := now.After(prev.ExpiresAt) || (!prev.Completed && now.After(prev.LockedUntil))
		if stale {
			if err := db.Where("organization_id = ? AND idempotency_key = ? AND created_at = ?", orgID, key, prev.CreatedAt).
				Delete(&IdempotencyKey{}).Error; err != nil {
				return nil, err
			}
			continue
		}
		if prev.RequestHash != requestHash {
			return nil, apperr.New(apperr.IdempotencyReused, "Idempotency-Key %q was used with a different request", key)
		}
		if !prev.Completed {
			return nil, apperr.New(apperr.IdempotencyInFlight, "a request with Idempotency-Key %q is still running", key)
		}
		return &prev, nil
	}
	return nil, apperr.New(apperr.IdempotencyInFlight, "a request with Idempotency-Key %q is still running", key)
}

// CompleteIdempotencyKey stores the response replays will return.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, orgID, key string, status int, contentType string, body []byte) error {
	return s.db.WithContext(ctx).Model(&IdempotencyKey{}).
		Where("organization_id = ? AND idempotency_key = ?", orgID, key).
		Updates(map[string]any{"completed": true, "status_code": status, "content_type": contentType, "response_body": body}).Error
}

// ReleaseIdempotencyKey forgets a claim whose request failed on the
// server's side, so the client may retry with the same key.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, orgID, key string) error {
	return s.db.WithContext(ctx).Where("organization_id = ? AND idempotency_key = ? AND completed = ?", orgID, key, false).
		Delete(&IdempotencyKey{}).Error
}

// PurgeExpiredIdempotencyKeys deletes keys past their lifetime.
func (s *Store) PurgeExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", Now()).Delete(&IdempotencyKey{})
	return res.RowsAffected, res.Error
}
