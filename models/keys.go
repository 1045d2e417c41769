package models

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

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

// CreateKey issues an agent or admin key with keyScopes, unaudited, and
// returns its secret: for fixtures (the admin service issues keys).
func (s *DirectoryStore) CreateKey(ctx context.Context, orgID, name, kind string, keyScopes []string) (*APIKey, string, error) {
	k := &APIKey{OrganizationID: orgID, Kind: kind, Name: name, Scopes: append(StringList{}, keyScopes...)}
	var secret string
	err := s.Tx(ctx, func(ctx context.Context) error {
		var err error
		secret, err = s.IssueKey(ctx, k)
		return err
	})
	return k, secret, err
}

// CreateMemberToken issues a token with every scope that acts as the
// member, unaudited: for fixtures (the admin service mints tokens).
func (s *DirectoryStore) CreateMemberToken(ctx context.Context, orgID, memberID string) (*APIKey, string, error) {
	m, err := s.GetMember(ctx, orgID, memberID)
	if err != nil {
		return nil, "", err
	}
	k := NewMemberToken(m, scopes.All)
	var secret string
	err = s.Tx(ctx, func(ctx context.Context) error {
		secret, err = s.IssueKey(ctx, k)
		return err
	})
	return k, secret, err
}

// NewMemberToken is a token to issue that acts as m with tokenScopes.
func NewMemberToken(m *Member, tokenScopes []string) *APIKey {
	return &APIKey{OrganizationID: m.OrganizationID, Kind: KeyMember, Name: "token for " + m.Email,
		Scopes: append(StringList{}, tokenScopes...), MemberID: &m.ID}
}

// IssueKey writes k with a new secret, in ctx's transaction, and returns
// the secret, which is never stored and cannot be shown again.
func (s *DirectoryStore) IssueKey(ctx context.Context, k *APIKey) (string, error) {
	st, err := inTx(ctx)
	if err != nil {
		return "", err
	}
	secret := newSecret(k.Kind)
	k.ID = newID(ids.Key)
	k.Hash = HashSecret(secret)
	k.Prefix = secret[:len(secretPrefix[k.Kind])+4]
	k.CreatedAt = Now()
	return secret, st.tx.Create(k).Error
}

// KeyAudit is an entry on k's trail.
func KeyAudit(k *APIKey, seq int, action, detail string, by Actor, at time.Time) *AuditEntry {
	return &AuditEntry{OrganizationID: k.OrganizationID, SubjectType: "key", SubjectID: k.ID, Seq: seq, Action: action,
		ActorID: by.ID, ActorName: by.Name, Detail: detail, At: at}
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

// RevokeKey stops a key from authenticating, unaudited: for fixtures
// (the admin service revokes keys).
func (s *DirectoryStore) RevokeKey(ctx context.Context, orgID, id string) (*APIKey, error) {
	var k *APIKey
	err := s.Tx(ctx, func(ctx context.Context) error {
		var err error
		if k, err = s.LockKey(ctx, orgID, id); err != nil || k.RevokedAt != nil {
			return err
		}
		_, err = s.MarkRevoked(ctx, k, Now())
		return err
	})
	return k, err
}

// LockKey reads the organisation's key id under its row lock, for the
// rest of ctx's transaction.
func (s *DirectoryStore) LockKey(ctx context.Context, orgID, id string) (*APIKey, error) {
	return lockedIn[APIKey](ctx, orgID, id, "key")
}

// MarkRevoked revokes k at now in ctx's transaction, only when it is
// still live: a second revocation racing it (where nothing locks the row)
// is told it lost (won false, k read again) and should write nothing.
func (s *DirectoryStore) MarkRevoked(ctx context.Context, k *APIKey, now time.Time) (won bool, err error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	res := st.tx.Model(&APIKey{}).Where("organization_id = ? AND id = ? AND revoked_at IS NULL", k.OrganizationID, k.ID).Update("revoked_at", now)
	if res.Error != nil {
		return false, res.Error
	}
	if res.RowsAffected == 0 {
		return false, st.tx.Where("organization_id = ? AND id = ?", k.OrganizationID, k.ID).Take(k).Error
	}
	k.RevokedAt = &now
	return true, nil
}

// KeyRevoked is the audit action of a key or token revoked.
const KeyRevoked = "key.revoked"

// DescribeKey names k in an audit entry: its kind, its name (a member
// token's says for whom), the member a token acts for and the characters
// its secret starts with, as the lists show them.
func DescribeKey(k *APIKey) string {
	what := k.Kind + " key " + k.Name
	if k.Kind == KeyMember {
		what = "member " + k.Name
		if k.MemberID != nil {
			what += " (" + *k.MemberID + ")"
		}
	}
	return what + ", starting " + k.Prefix
}

// KeyBySecret finds the unrevoked key whose secret is secret, with its
// organisation and, for a member token, its member (nil once the member
// is gone), in one statement (joins), looked up afresh on every call so
// that a revocation or a deactivation holds at once; none is NotFound.
func (s *DirectoryStore) KeyBySecret(ctx context.Context, secret string) (*APIKey, error) {
	var k APIKey
	err := s.db.WithContext(ctx).Joins("Organization").Joins("Member").
		Where("api_keys.hash = ? AND api_keys.revoked_at IS NULL", HashSecret(secret)).Take(&k).Error
	if err != nil {
		return nil, notFound(err, "key")
	}
	if k.Organization == nil {
		return nil, fmt.Errorf("key %s: its organisation %s is missing", k.ID, k.OrganizationID)
	}
	if k.Member != nil && k.Member.OrganizationID != k.OrganizationID {
		k.Member = nil
	}
	return &k, nil
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
