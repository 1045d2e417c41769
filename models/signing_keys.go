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

// Purposes the signing keys' private halves are sealed for, one per family.
const (
	sealEvidenceKey = "evidence_keys.private_key"
	sealDecisionKey = "decision_keys.private_key"
)

// KeyFamily is one use of the instance's Ed25519 signing keys. Each family
// has its own table, seal purpose and id prefix, so a key signs for one
// use only: an evidence key never signs a decision token, nor the reverse.
type KeyFamily struct {
	name    string // in errors: "evidence key"
	table   string
	purpose string // what the private halves are sealed for
	prefix  string // of the key ids
}

var (
	// EvidenceFamily signs evidence exports' digests, published at
	// /.well-known/assent/evidence-keys.
	EvidenceFamily = KeyFamily{name: "evidence key", table: "evidence_keys", purpose: sealEvidenceKey, prefix: ids.EvidenceKey}
	// DecisionFamily signs decision tokens, published at
	// /.well-known/jwks.json.
	DecisionFamily = KeyFamily{name: "decision key", table: "decision_keys", purpose: sealDecisionKey, prefix: ids.DecisionKey}
)

// keyFamilies are every family; their private halves are sealed columns.
var keyFamilies = []KeyFamily{EvidenceFamily, DecisionFamily}

// column is the sealed column that holds the family's private halves.
func (f KeyFamily) column() sealedColumn {
	return sealedColumn{f.table, []string{"id"}, "private_key", f.purpose, false}
}

// SigningKey is an Ed25519 key pair of one family. One is active at a
// time; retired keys stay listed so what they signed still verifies.
type SigningKey struct {
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

// EvidenceKey is a key of the evidence family.
type EvidenceKey = SigningKey

// ActiveSigningKey returns the family's active key with its private half,
// making the instance's first on first use.
func (s *SigningKeyStore) ActiveSigningKey(ctx context.Context, f KeyFamily) (*SigningKey, ed25519.PrivateKey, error) {
	return s.activeKey(s.db.WithContext(ctx), f)
}

// activeKey is ActiveSigningKey on db, which may be a transaction.
func (s *SigningKeyStore) activeKey(db *gorm.DB, f KeyFamily) (*SigningKey, ed25519.PrivateKey, error) {
	var k SigningKey
	err := db.Table(f.table).Where("active = ?", true).Take(&k).Error
	if err == gorm.ErrRecordNotFound {
		if err = db.Table(f.table).Clauses(clause.OnConflict{DoNothing: true}).Create(s.newKey(f)).Error; err == nil {
			err = db.Table(f.table).Where("active = ?", true).Take(&k).Error
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.name, err)
	}
	private, err := s.open(f.column(), k.SealedPrivate, k.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", f.name, k.ID, err)
	}
	raw, err := base64.StdEncoding.DecodeString(private)
	if err != nil || len(raw) != ed25519.SeedSize {
		return nil, nil, fmt.Errorf("%s %s: its private half is damaged", f.name, k.ID)
	}
	return &k, ed25519.NewKeyFromSeed(raw), nil
}

// newKey makes an active key pair of the family, its private half sealed.
func (s *SigningKeyStore) newKey(f KeyFamily) *SigningKey {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // the system's randomness failed: nothing is safe to do
	}
	active := true
	k := &SigningKey{ID: newID(f.prefix), PublicKey: public, Active: &active, CreatedAt: Now()}
	k.SealedPrivate = s.seal(f.column(), base64.StdEncoding.EncodeToString(private.Seed()), k.ID)
	return k
}

// RotateSigningKey retires the family's active key and makes a new one;
// the old one stays listed.
func (s *SigningKeyStore) RotateSigningKey(ctx context.Context, f KeyFamily) (*SigningKey, error) {
	k := s.newKey(f)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Table(f.table).Where("active = ?", true).
			Updates(map[string]any{"active": nil, "retired_at": k.CreatedAt}).Error; err != nil {
			return err
		}
		return tx.Table(f.table).Create(k).Error
	})
	return k, err
}

// SigningKeys lists every key of the family, the oldest first.
func (s *SigningKeyStore) SigningKeys(ctx context.Context, f KeyFamily) ([]SigningKey, error) {
	var out []SigningKey
	err := s.db.WithContext(ctx).Table(f.table).Order("created_at, id").Find(&out).Error
	return out, err
}

// SigningEvidenceKey returns the active evidence key with its private
// half, making the instance's first on first use.
func (s *SigningKeyStore) SigningEvidenceKey(ctx context.Context) (*EvidenceKey, ed25519.PrivateKey, error) {
	return s.ActiveSigningKey(ctx, EvidenceFamily)
}

// RotateEvidenceKey retires the active evidence key and makes a new one;
// the old one stays listed.
func (s *SigningKeyStore) RotateEvidenceKey(ctx context.Context) (*EvidenceKey, error) {
	return s.RotateSigningKey(ctx, EvidenceFamily)
}

// EvidenceKeys lists every evidence key, the oldest first.
func (s *SigningKeyStore) EvidenceKeys(ctx context.Context) ([]EvidenceKey, error) {
	return s.SigningKeys(ctx, EvidenceFamily)
}
