package admin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// NewKey is an agent or admin key to issue.
type NewKey struct {
	Name   string   `json:"name" validate:"required,max=200"`
	Kind   string   `json:"kind" validate:"required,oneof=agent admin"`
	Scopes []string `json:"scopes" validate:"max=50"`
}

// CreateKey issues the key and returns its secret, which is never stored
// and cannot be shown again. An agent key needs known scopes, each kept
// once; an admin key manages the organisation and carries none. The audit
// trail names by as its issuer.
func (s *Service) CreateKey(ctx context.Context, orgID string, by models.Actor, in NewKey) (*models.APIKey, string, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, "", err
	}
	var keyScopes []string
	switch in.Kind {
	case models.KeyAgent:
		if len(in.Scopes) == 0 {
			return nil, "", apperr.Field(apperr.InvalidRequest, "scopes", "an agent key needs at least one scope")
		}
		var err error
		if keyScopes, err = knownScopes(in.Scopes); err != nil {
			return nil, "", err
		}
	case models.KeyAdmin:
		if len(in.Scopes) > 0 {
			return nil, "", apperr.Field(apperr.InvalidRequest, "scopes", "admin keys manage the organisation and carry no scopes")
		}
	}
	k := &models.APIKey{OrganizationID: orgID, Kind: in.Kind, Name: in.Name, Scopes: append(models.StringList{}, keyScopes...)}
	var secret string
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		secret, err = s.issue(ctx, k, by, in.Kind+" key "+in.Name)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}

// issue writes k with a new secret and its audit entry naming who issued
// it, what for and with which scopes, in ctx's transaction.
func (s *Service) issue(ctx context.Context, k *models.APIKey, by models.Actor, what string) (string, error) {
	secret, err := s.store.Directory().IssueKey(ctx, k)
	if err != nil {
		return "", err
	}
	scopeList := "no scopes"
	if len(k.Scopes) > 0 {
		scopeList = "scopes " + strings.Join(k.Scopes, ", ")
	}
	return secret, s.store.Audit(ctx, models.KeyAudit(k, 1, models.KeyIssued, what+", "+scopeList, by, k.CreatedAt))
}

// ListKeys pages through the organisation's keys and tokens, revoked ones
// included.
func (s *Service) ListKeys(ctx context.Context, orgID string, p models.Page) ([]models.APIKey, string, error) {
	return s.store.Directory().ListKeys(ctx, orgID, p)
}

// RevokeKey stops a key or token from authenticating; the next request it
// signs fails. The audit trail names by as who revoked it (key.revoked).
// Revoking a revoked key changes nothing.
func (s *Service) RevokeKey(ctx context.Context, orgID string, by models.Actor, id string) (*models.APIKey, error) {
	return s.revoke(ctx, orgID, by, id, nil)
}

// revoke stops a key from authenticating, under its row lock, once allow
// (nil for any) accepts it as locked, and audits key.revoked naming by,
// numbered after the key's own entries. Revoking a revoked key changes
// nothing and writes nothing.
func (s *Service) revoke(ctx context.Context, orgID string, by models.Actor, id string, allow func(*models.APIKey) error) (*models.APIKey, error) {
	var k *models.APIKey
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if k, err = s.store.Directory().LockKey(ctx, orgID, id); err != nil {
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
		now := models.Now()
		if won, err := s.store.Directory().MarkRevoked(ctx, k, now); err != nil || !won {
			return err
		}
		seq, err := s.store.NextSeq(ctx, orgID, k.ID)
		if err != nil {
			return err
		}
		return s.store.Audit(ctx, models.KeyAudit(k, seq, models.KeyRevoked, models.DescribeKey(k), by, now))
	})
	return k, err
}

// A person's own tokens: the one rule of whose tokens a person sees and
// revokes, behind GET and DELETE /api/v1/me/tokens and the Settings page.
// Only a member acting as themselves (a member token, or signed in to the
// pages) has any; they see and revoke the member tokens that act as them
// and nothing else. Any other key, or another person's token, is not found,
// answered as an id that does not exist, so nothing says it is there.

// ownTokensHolder is the member whose tokens by may see and revoke, or a
// 403 saying refused when by is a key or a guest, who hold none.
func ownTokensHolder(by models.Actor, refused string) (*models.Member, error) {
	m := by.Member()
	if m == nil || !by.IsPerson {
		return nil, apperr.New(apperr.Forbidden, "%s", refused)
	}
	return m, nil
}

// OwnTokens pages through the member tokens that act as by, revoked ones
// included, newest first.
func (s *Service) OwnTokens(ctx context.Context, orgID string, by models.Actor, p models.Page) ([]models.APIKey, string, error) {
	m, err := ownTokensHolder(by,
		"this is a person's list of their own tokens: use a member token (an admin key lists the organisation's keys at /api/v1/admin/keys)")
	if err != nil {
		return nil, "", err
	}
	return s.store.Directory().ListMemberTokens(ctx, orgID, m.ID, p)
}

// errNotYourToken is how a key that is not by's own token is refused: as
// a key that does not exist (models' take says the same).
var errNotYourToken = apperr.New(apperr.NotFound, "key not found")

// RevokeOwnToken revokes one of by's own member tokens, audited as
// RevokeKey is (key.revoked naming by). Revoking a revoked one changes
// nothing; another person's token or any key that is not a token of by's
// is not found.
func (s *Service) RevokeOwnToken(ctx context.Context, orgID string, by models.Actor, id string) (*models.APIKey, error) {
	m, err := ownTokensHolder(by,
		"a person revokes their own tokens here: use a member token (an admin key revokes any key at /api/v1/admin/keys/{id})")
	if err != nil {
		return nil, err
	}
	return s.revoke(ctx, orgID, by, id, func(k *models.APIKey) error {
		if k.Kind != models.KeyMember || k.MemberID == nil || *k.MemberID != m.ID {
			return errNotYourToken
		}
		return nil
	})
}

// knownScopes is list with each scope once, or an error naming one that
// is unknown.
func knownScopes(list []string) ([]string, error) {
	var out []string
	for _, sc := range list {
		if !scopes.Valid(sc) {
			return nil, apperr.Field(apperr.InvalidRequest, "scopes", "unknown scope %q; known scopes: %s", sc, strings.Join(scopes.All, ", "))
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// NewMemberToken is a member token to mint. No scopes asks for the most
// the minter may give.
type NewMemberToken struct {
	Scopes []string `json:"scopes" validate:"max=50"`
}

// OwnTokenScopes are the scopes a person may give a token of their own:
// those of the member token they mint it with (ceiling), or every scope
// when they mint it signed in to the pages (ceiling nil), as a sign-in
// acts with every scope. MintMemberToken holds a person's own mint to it,
// whether from POST /api/v1/me/tokens or the Settings page, and the page
// offers these.
func OwnTokenScopes(ceiling []string) []string {
	if ceiling == nil {
		return slices.Clone(scopes.All)
	}
	return slices.Clone(ceiling)
}

// MintMemberToken issues a token that acts as member memberID and returns
// its secret; the audit trail names by as its minter, for whom and with
// which scopes. A token that can act as its person (decide, ask, answer,
// reply, give a verdict, write anything in their name) is that person's
// alone:
//
//   - the member themself (by is that person) mints any scopes within
//     OwnTokenScopes(ceiling), the scopes of the token they mint it with
//     (nil for a sign-in: every scope);
//   - the operator (by is Operator, `assent admin`) mints any scopes for
//     anyone: they hold the instance's database and key anyway;
//   - anyone else (an admin key) mints read scopes only, and never for an
//     owner or administrator.
func (s *Service) MintMemberToken(ctx context.Context, orgID string, by models.Actor, ceiling []string, memberID string,
	in NewMemberToken) (*models.APIKey, string, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, "", err
	}
	want, err := knownScopes(in.Scopes)
	if err != nil {
		return nil, "", err
	}
	self := by.IsPerson && by.ID == memberID
	switch {
	case by == Operator:
		if len(want) == 0 {
			want = scopes.All
		}
	case self:
		ceiling = OwnTokenScopes(ceiling)
		if len(want) == 0 {
			want = ceiling
		}
		for _, sc := range want {
			if !slices.Contains(ceiling, sc) {
				return nil, "", apperr.Field(apperr.Forbidden, "scopes", "the token minting this one lacks %s, so it cannot give it", sc)
			}
		}
	default:
		if len(want) == 0 {
			want = scopes.Read
		}
		return s.mint(ctx, orgID, memberID, want, by, func(m *models.Member) error {
			if m.Administers() {
				return apperr.New(apperr.Forbidden, "%s is an organisation %s: only they mint their tokens, an admin key none", m.Email, m.Role)
			}
			for _, sc := range want {
				if !scopes.IsRead(sc) {
					return apperr.Field(apperr.Forbidden, "scopes",
						"%s would act as the person: a token for someone else carries read scopes only (%s); the person mints one that acts themselves",
						sc, strings.Join(scopes.Read, ", "))
				}
			}
			return nil
		})
	}
	return s.mint(ctx, orgID, memberID, want, by, nil)
}

// mint issues a token that acts as member memberID with tokenScopes,
// audited as minted by by for whom with which scopes. allow (nil for
// any) sees the member under lock, so a role changed meanwhile cannot
// slip past it; an inactive member gets none.
func (s *Service) mint(ctx context.Context, orgID, memberID string, tokenScopes []string, by models.Actor,
	allow func(*models.Member) error) (*models.APIKey, string, error) {
	var k *models.APIKey
	var secret string
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		m, err := s.store.Directory().LockMember(ctx, orgID, memberID)
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
		k = models.NewMemberToken(m, tokenScopes)
		secret, err = s.issue(ctx, k, by, fmt.Sprintf("member token for %s (%s, %s)", m.DisplayName(), m.Email, m.ID))
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return k, secret, nil
}
