package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/scopes"
)

// Secret prefixes say what a key is when it turns up in a log or a leak
// scanner.
var secretPrefix = map[string]string{
	KeyAgent:  "asnt_agent_",
	KeyAdmin:  "asnt_admin_",
	KeyMember: "asnt_member_",
}

// HashSecret is how a key's secret is stored and looked up. Keys carry 256
// random bits, so a fast hash is enough; a slow one would tax every request.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func newSecret(kind string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return secretPrefix[kind] + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// CreateKey issues an agent or admin key with keyScopes (package admin
// checks they fit the kind) and returns its secret, which is never stored
// and cannot be shown again. The service issues keys through CreateKeyBy,
// which audits; this is for fixtures.
func (s *DirectoryStore) CreateKey(ctx context.Context, orgID, name, kind string, keyScopes []string) (*APIKey, string, error) {
	return s.CreateKeyBy(ctx, orgID, name, kind, keyScopes, nil)
}

// CreateKeyBy is CreateKey, writing to the audit trail who issued the key
// (when by is set), in the same transaction.
func (s *DirectoryStore) CreateKeyBy(ctx context.Context, orgID, name, kind string, keyScopes []string, by *Actor) (*APIKey, string, error) {
	k := &APIKey{OrganizationID: orgID, Kind: kind, Name: name, Scopes: append(StringList{}, keyScopes...)}
	var secret string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		secret, err = insertKey(tx, k, by, kind+" key "+name)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// CreateMemberToken is the member minting their own token with every
// scope, as a sign-in gives them: fixtures and tests use it.
func (s *DirectoryStore) CreateMemberToken(ctx context.Context, orgID, memberID string) (*APIKey, string, error) {
	m, err := s.GetMember(ctx, orgID, memberID)
	if err != nil {
		return nil, "", err
	}
	self := Actor{ID: m.ID, Name: m.DisplayName(), IsPerson: true, Administrator: m.Administers()}
	return s.MintMemberToken(ctx, orgID, memberID, scopes.All, self, nil)
}

// MintMemberToken issues a token that acts as member memberID with
// tokenScopes, and writes to the audit trail who minted it for whom with
// which scopes. allow (package admin's rule of who may mint what) sees the
// member under lock, so a role changed meanwhile cannot slip past it.
func (s *DirectoryStore) MintMemberToken(ctx context.Context, orgID, memberID string, tokenScopes []string, by Actor,
	allow func(*Member) error) (*APIKey, string, error) {
	var k *APIKey
	var secret string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		m, err := take[Member](tx.Clauses(lockForUpdate(tx)...), orgID, memberID, "member")
		if err != nil {
			return err
		}
		if !m.Active {
			return apperr.New(apperr.InvalidState, "member %s is inactive", m.Email)
		}
		if allow != nil {
			if err := allow(m); err != nil {
				return err
			}
		}
		k = &APIKey{OrganizationID: orgID, Kind: KeyMember, Name: "token for " + m.Email,
			Scopes: append(StringList{}, tokenScopes...), MemberID: &m.ID}
		secret, err = insertKey(tx, k, &by, fmt.Sprintf("member token for %s (%s, %s)", m.DisplayName(), m.Email, m.ID))
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// insertKey saves k with a new secret and, when by is set, the audit
// entry naming who issued it, what for and with which scopes.
func insertKey(tx *gorm.DB, k *APIKey, by *Actor, what string) (string, error) {
	secret := newSecret(k.Kind)
	k.ID = newID(ids.Key)
	k.Hash = HashSecret(secret)
	k.Prefix = secret[:len(secretPrefix[k.Kind])+4]
	k.CreatedAt = Now()
	if err := tx.Create(k).Error; err != nil {
		return "", err
	}
	if by == nil {
		return secret, nil
	}
	scopeList := "no scopes"
	if len(k.Scopes) > 0 {
		scopeList = "scopes " + strings.Join(k.Scopes, ", ")
	}
	return secret, writeAudit(tx, &AuditEntry{ID: newID(ids.Audit), OrganizationID: k.OrganizationID, SubjectType: "key",
		SubjectID: k.ID, Seq: 1, Action: KeyIssued, ActorID: by.ID, ActorName: by.Name,
		Detail: what + ", " + scopeList, At: k.CreatedAt})
}

// KeyIssued is the audit action of a key or token issued.
const KeyIssued = "key.issued"

// ListKeys pages through keys and tokens, revoked ones included.
func (s *DirectoryStore) ListKeys(ctx context.Context, orgID string, p Page) ([]APIKey, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	return list(q, p, ids.Key, func(k *APIKey) string { return k.ID })
}

// ListMemberTokens pages through the member tokens that act as memberID,
// revoked ones included, newest first: no agent or admin key, and no one
// else's token.
func (s *DirectoryStore) ListMemberTokens(ctx context.Context, orgID, memberID string, p Page) ([]APIKey, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ? AND kind = ? AND member_id = ?", orgID, KeyMember, memberID)
	return list(q, p, ids.Key, func(k *APIKey) string { return k.ID })
}

// RevokeKey stops a key from authenticating, unaudited. The service
// revokes through RevokeKeyBy, which audits; this is for fixtures.
func (s *DirectoryStore) RevokeKey(ctx context.Context, orgID, id string) (*APIKey, error) {
	return s.RevokeKeyBy(ctx, orgID, id, nil, nil)
}

// RevokeKeyBy stops a key from authenticating; the next request it signs
// fails. allow (package admin's rule of whose key may be revoked, nil for
// any) sees the key under lock and may refuse it. When by is set, the
// audit trail gets a key.revoked entry naming by, in the same transaction,
// numbered after the key's own entries. Revoking a revoked key changes
// nothing and writes nothing.
func (s *DirectoryStore) RevokeKeyBy(ctx context.Context, orgID, id string, by *Actor, allow func(*APIKey) error) (*APIKey, error) {
	var k *APIKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if k, err = take[APIKey](tx.Clauses(lockForUpdate(tx)...), orgID, id, "key"); err != nil {
			return err
		}
		if allow != nil {
			if err := allow(k); err != nil {
				return err
			}
		}
		if k.RevokedAt != nil {
			return nil
		}
		now := Now()
		// Only the revocation that finds it live writes, so a second one
		// racing it (where nothing locks the row) audits nothing.
		res := tx.Model(&APIKey{}).Where("organization_id = ? AND id = ? AND revoked_at IS NULL", orgID, k.ID).Update("revoked_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return tx.Where("organization_id = ? AND id = ?", orgID, k.ID).Take(k).Error
		}
		k.RevokedAt = &now
		if by == nil {
			return nil
		}
		seq, err := nextSeq(tx, orgID, k.ID)
		if err != nil {
			return err
		}
		return writeAudit(tx, &AuditEntry{ID: newID(ids.Audit), OrganizationID: orgID, SubjectType: "key", SubjectID: k.ID,
			Seq: seq, Action: KeyRevoked, ActorID: by.ID, ActorName: by.Name, Detail: describeKey(k), At: now})
	})
	return k, err
}

// KeyRevoked is the audit action of a key or token revoked.
const KeyRevoked = "key.revoked"

// describeKey names k in an audit entry: its kind, its name (a member
// token's says for whom), the member a token acts for and the characters
// its secret starts with, as the lists show them.
func describeKey(k *APIKey) string {
	what := k.Kind + " key " + k.Name
	if k.Kind == KeyMember {
		what = "member " + k.Name
		if k.MemberID != nil {
			what += " (" + *k.MemberID + ")"
		}
	}
	return what + ", starting " + k.Prefix
}

var errUnauthorized = apperr.New(apperr.Unauthorized, "the API key is missing, unknown or revoked")

// Authenticate finds who a bearer secret acts for.
func (s *DirectoryStore) Authenticate(ctx context.Context, secret string) (Actor, error) {
	if secret == "" {
		return Actor{}, errUnauthorized
	}
	db := s.db.WithContext(ctx)
	var k APIKey
	// Every call authenticates: the key, its organisation and a member
	// token's member in one statement (joins), looked up afresh each time
	// so a revocation or a deactivation holds at once.
	if err := db.Joins("Organization").Joins("Member").Where("api_keys.hash = ? AND api_keys.revoked_at IS NULL", HashSecret(secret)).
		Take(&k).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return Actor{}, errUnauthorized
		}
		return Actor{}, err
	}
	org := k.Organization
	if org == nil {
		return Actor{}, fmt.Errorf("key %s: its organisation %s is missing", k.ID, k.OrganizationID)
	}
	if k.MemberID == nil {
		return KeyActor(org, &k, nil), nil
	}
	m := k.Member
	if m == nil || m.OrganizationID != k.OrganizationID {
		return Actor{}, apperr.New(apperr.Unauthorized, "the member this token belongs to is gone")
	}
	if !m.Active {
		return Actor{}, apperr.New(apperr.Unauthorized, "the member this token belongs to is inactive")
	}
	return KeyActor(org, &k, m), nil
}

// ActiveAgentKeys are the organisation's unrevoked agent keys among ids.
func (s *DirectoryStore) ActiveAgentKeys(ctx context.Context, orgID string, ids []string) ([]APIKey, error) {
	var out []APIKey
	if len(ids) == 0 {
		return out, nil
	}
	err := s.db.WithContext(ctx).Where("organization_id = ? AND kind = ? AND revoked_at IS NULL AND id IN ?", orgID, KeyAgent, ids).
		Find(&out).Error
	return out, err
}
