package models

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/ids"
)

// sealPushKey is the purpose the VAPID private key is sealed for.
const sealPushKey = "push_keys.private_key"

// pushKeyID names the instance's one VAPID key pair.
const pushKeyID = "vapid"

// PushKey is the instance's VAPID key pair (RFC 8292, P-256): browsers
// subscribe with its public half (the applicationServerKey) and accept
// pushes signed with its private half, sealed under the instance's key.
type PushKey struct {
	ID string `gorm:"primaryKey;size:40"`
	// PublicKey is the uncompressed point, base64url without padding, as
	// browsers take it.
	PublicKey     string `gorm:"size:100;not null"`
	SealedPrivate string `gorm:"column:private_key;type:text;not null"`
	CreatedAt     time.Time
}

// VAPIDKey returns the instance's VAPID key pair, both halves base64url
// without padding (the private half is the raw 32-byte scalar), making it
// on first use. Two processes starting at once make one: the row's id is
// fixed.
func (s *PushStore) VAPIDKey(ctx context.Context) (public, private string, err error) {
	db := s.db.WithContext(ctx)
	var k PushKey
	err = db.Where("id = ?", pushKeyID).Take(&k).Error
	if err == gorm.ErrRecordNotFound {
		if err = db.Clauses(clause.OnConflict{DoNothing: true}).Create(s.newPushKey()).Error; err == nil {
			err = db.Where("id = ?", pushKeyID).Take(&k).Error
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("push key: %w", err)
	}
	private, err = s.open(colPushKey, k.SealedPrivate, k.ID)
	if err != nil {
		return "", "", fmt.Errorf("push key: %w", err)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(private); err != nil || len(raw) != 32 {
		return "", "", errors.New("push key: its private half is damaged")
	}
	return k.PublicKey, private, nil
}

func (s *PushStore) newPushKey() *PushKey {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // the system's randomness failed: nothing is safe to do
	}
	return &PushKey{ID: pushKeyID, PublicKey: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), CreatedAt: Now(),
		SealedPrivate: s.seal(colPushKey, base64.RawURLEncoding.EncodeToString(key.Bytes()), pushKeyID)}
}

// PushSubscription is one browser's Web Push subscription (the Push API's
// PushSubscription) for one person: pushes to Endpoint are encrypted to
// P256dh with the Auth secret (RFC 8291). A person has one per browser;
// an endpoint belongs to one person, whoever subscribed it last.
type PushSubscription struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	PersonID       string `gorm:"size:40;not null;index"`
	Endpoint       string `gorm:"type:text;not null"`
	// EndpointHash (SHA-256, hex) keeps endpoints unique whatever their
	// length.
	EndpointHash string `gorm:"size:64;not null;uniqueIndex"`
	// P256dh and Auth are the browser's keys, base64url as the browser
	// gives them.
	P256dh string `gorm:"size:100;not null"`
	Auth   string `gorm:"size:40;not null"`
	// SessionID is the sign-in it was made in: signing out there ends it,
	// so a shared browser stops showing the person's requests.
	SessionID string `gorm:"size:40;index"`
	CreatedAt time.Time
}

// NewPushSubscription is what a browser sends when it subscribes.
type NewPushSubscription struct {
	Endpoint string
	P256dh   string
	Auth     string
}

func endpointHash(endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return hex.EncodeToString(sum[:])
}

// SubscribePush stores a browser's subscription for person, made in the
// sign-in sessionID, replacing the endpoint's keys and owner if it was
// stored already (a browser signed in as someone else since is theirs
// now). It does not check n.
func (s *PushStore) SubscribePush(ctx context.Context, person *Person, sessionID string, n NewPushSubscription) (*PushSubscription, error) {
	sub := &PushSubscription{ID: newID(ids.PushSub), OrganizationID: person.orgID(), PersonID: person.ID(),
		Endpoint: n.Endpoint, EndpointHash: endpointHash(n.Endpoint), P256dh: n.P256dh, Auth: n.Auth, SessionID: sessionID, CreatedAt: Now()}
	var stored PushSubscription
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "endpoint_hash"}},
			DoUpdates: clause.AssignmentColumns([]string{"organization_id", "person_id", "p256dh", "auth", "session_id"}),
		}).Create(sub).Error; err != nil {
			return err
		}
		return tx.Where("endpoint_hash = ?", sub.EndpointHash).Take(&stored).Error
	})
	if err != nil {
		return nil, err
	}
	return &stored, nil
}

// UnsubscribePush removes person's subscription at endpoint, if any: the
// person turned notifications off in that browser.
func (s *PushStore) UnsubscribePush(ctx context.Context, person *Person, endpoint string) error {
	return s.db.WithContext(ctx).Where("endpoint_hash = ? AND organization_id = ? AND person_id = ?",
		endpointHash(endpoint), person.orgID(), person.ID()).Delete(&PushSubscription{}).Error
}

// PushSubscriptions lists personID's subscriptions in orgID, the oldest
// first.
func (s *PushStore) PushSubscriptions(ctx context.Context, orgID, personID string) ([]PushSubscription, error) {
	var out []PushSubscription
	err := s.db.WithContext(ctx).Where("organization_id = ? AND person_id = ?", orgID, personID).
		Order("created_at, id").Find(&out).Error
	return out, err
}

// PushSubscribed says whether person's subscription at endpoint is
// stored.
func (s *PushStore) PushSubscribed(ctx context.Context, person *Person, endpoint string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&PushSubscription{}).Where("endpoint_hash = ? AND organization_id = ? AND person_id = ?",
		endpointHash(endpoint), person.orgID(), person.ID()).Count(&n).Error
	return n > 0, err
}

// RemovePushSubscription removes the subscription sub, as its push service
// answered that it is gone. One replaced since (the same endpoint
// subscribed again, with new keys) stays.
func (s *PushStore) RemovePushSubscription(ctx context.Context, sub *PushSubscription) error {
	return s.db.WithContext(ctx).Where("id = ? AND p256dh = ? AND auth = ?", sub.ID, sub.P256dh, sub.Auth).
		Delete(&PushSubscription{}).Error
}
