package models

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/ids"
)

// sealEvidenceKey is the purpose the evidence keys' private halves are
// sealed for.
const sealEvidenceKey = "evidence_keys.private_key"

// EvidenceKey is an Ed25519 key pair the instance signs evidence exports
// with. One is active at a time; retired keys stay listed so exports they
// signed still verify.
type EvidenceKey struct {
	ID string `gorm:"primaryKey;size:40"`
	// PublicKey is the raw public key; SealedPrivate its private half
	// sealed under the instance's secret key.
	PublicKey     []byte `gorm:"not null"`
	SealedPrivate string `gorm:"column:private_key;type:text;not null"`
	// Active is true for the signing key and null once retired: a unique
	// column, so two processes starting at once cannot both make one.
	Active    *bool `gorm:"uniqueIndex"`
	CreatedAt time.Time
	RetiredAt *time.Time
}

// SigningEvidenceKey returns the active evidence key with its private
// half, making the instance's first on first use.
func (s *Store) SigningEvidenceKey(ctx context.Context) (*EvidenceKey, ed25519.PrivateKey, error) {
	db := s.db.WithContext(ctx)
	var k EvidenceKey
	err := db.Where("active = ?", true).Take(&k).Error
	if err == gorm.ErrRecordNotFound {
		if err = db.Clauses(clause.OnConflict{DoNothing: true}).Create(s.newEvidenceKey()).Error; err == nil {
			err = db.Where("active = ?", true).Take(&k).Error
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("evidence key: %w", err)
	}
	private, err := s.secrets.Open(sealEvidenceKey, k.SealedPrivate)
	if err != nil {
		return nil, nil, fmt.Errorf("evidence key %s: %w", k.ID, err)
	}
	raw, err := base64.StdEncoding.DecodeString(private)
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, nil, fmt.Errorf("evidence key %s: its private half is damaged", k.ID)
	}
	return &k, ed25519.NewKeyFromSeed(raw), nil
}

// newEvidenceKey makes an active key pair, its private half sealed.
func (s *Store) newEvidenceKey() *EvidenceKey {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // the system's randomness failed: nothing is safe to do
	}
	active := true
	return &EvidenceKey{ID: newID(ids.EvidenceKey), PublicKey: public, Active: &active, CreatedAt: Now(),
		SealedPrivate: s.secrets.Seal(sealEvidenceKey, base64.StdEncoding.EncodeToString(private.Seed()))}
}

// RotateEvidenceKey retires the active key and makes a new one; the old
// one stays listed.
func (s *Store) RotateEvidenceKey(ctx context.Context) (*EvidenceKey, error) {
	k := s.newEvidenceKey()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&EvidenceKey{}).Where("active = ?", true).
			Updates(map[string]any{"active": nil, "retired_at": k.CreatedAt}).Error; err != nil {
			return err
		}
		return tx.Create(k).Error
	})
	return k, err
}

// EvidenceKeys lists every evidence key, the oldest first.
func (s *Store) EvidenceKeys(ctx context.Context) ([]EvidenceKey, error) {
	var out []EvidenceKey
	err := s.db.WithContext(ctx).Order("created_at, id").Find(&out).Error
	return out, err
}
