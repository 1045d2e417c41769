package models_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func TestMigrateTwiceIsANoOp(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, models.Migrate(db))
	})
}

func TestMembersAreScopedAndUnique(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		a, b := testenv.NewOrg(t, s), testenv.NewOrg(t, s)

		m, err := s.CreateMember(ctx, a.ID, " Ada@Example.COM ", "Ada", "")
		require.NoError(t, err)
		assert.Equal(t, "ada@example.com", m.Email)
		assert.Equal(t, models.RoleMember, m.Role)
		assert.True(t, m.Active)

		_, err = s.CreateMember(ctx, a.ID, "ada@example.com", "", "")
		assert.ErrorIs(t, err, models.ErrDuplicate, "an address is one member's")

		// The same address in another organisation is another person.
		_, err = s.CreateMember(ctx, b.ID, "ada@example.com", "", "")
		require.NoError(t, err)

		_, err = s.GetMember(ctx, b.ID, m.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "cross-org read: %v", err)
	})
}

func TestListPagesWithOpaqueCursor(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		for _, e := range []string{"1@x.io", "2@x.io", "3@x.io", "4@x.io", "5@x.io"} {
			_, err := s.CreateMember(ctx, org.ID, e, "", "")
			require.NoError(t, err)
		}
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5)
			ms, next, err := s.ListMembers(ctx, org.ID, models.Page{Limit: 2, Cursor: cursor})
			require.NoError(t, err)
			for _, m := range ms {
				seen = append(seen, m.Email)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		assert.Equal(t, []string{"5@x.io", "4@x.io", "3@x.io", "2@x.io", "1@x.io"}, seen)

		// "!!" is not base64; "tdqblxhfk0mc" is, of bytes with an underscore
		// that are not UTF-8 (PostgreSQL would refuse them in a query).
		for _, bad := range []string{"!!", "tdqblxhfk0mc"} {
			_, _, err := s.ListMembers(ctx, org.ID, models.Page{Limit: 2, Cursor: bad})
			assert.True(t, apperr.Is(err, apperr.InvalidRequest), "cursor %q: %v", bad, err)
		}
	})
}

// TestKeysAreFoundBySecretUntilRevoked: a key is found by its secret,
// with its organisation, until it is revoked (accounts decides what each
// means for the caller).
func TestKeysAreFoundBySecretUntilRevoked(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		k, secret, err := s.CreateKey(ctx, org.ID, "bot", models.KeyAgent, []string{"approvals:read"})
		require.NoError(t, err)
		assert.Equal(t, models.StringList{"approvals:read"}, k.Scopes)
		assert.NotContains(t, k.Hash, secret)
		assert.Equal(t, models.HashSecret(secret), k.Hash)

		found, err := s.KeyBySecret(ctx, secret)
		require.NoError(t, err)
		assert.Equal(t, k.ID, found.ID)
		assert.Equal(t, org.ID, found.Organization.ID)
		assert.Nil(t, found.Member)

		_, err = s.RevokeKey(ctx, org.ID, k.ID)
		require.NoError(t, err)
		_, err = s.KeyBySecret(ctx, secret)
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	})
}

// TestMemberTokensComeWithTheirMember: a member token is found with its
// member as the member is now; one whose member is another organisation's
// comes with none.
func TestMemberTokensComeWithTheirMember(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		m, _ := s.CreateMember(ctx, org.ID, "m@example.com", "", "")
		_, secret, err := s.CreateMemberToken(ctx, org.ID, m.ID)
		require.NoError(t, err)
		k, err := s.KeyBySecret(ctx, secret)
		require.NoError(t, err)
		require.NotNil(t, k.Member)
		assert.Equal(t, m.ID, k.Member.ID)
		assert.True(t, k.Member.Active)

		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = false })
		k, err = s.KeyBySecret(ctx, secret)
		require.NoError(t, err)
		assert.False(t, k.Member.Active, "read afresh")

		other := testenv.NewOrg(t, s)
		stranger, err := s.CreateMember(ctx, other.ID, "s@example.com", "", "")
		require.NoError(t, err)
		require.NoError(t, db.Model(&models.APIKey{}).Where("id = ?", k.ID).Update("member_id", stranger.ID).Error)
		k, err = s.KeyBySecret(ctx, secret)
		require.NoError(t, err)
		assert.Nil(t, k.Member, "another organisation's member")
		assert.NotNil(t, k.MemberID)
	})
}

func TestIdempotencyClaimIsExclusive(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		claim := func(principal, key, hash string) *models.Claim {
			return &models.Claim{OrganizationID: org.ID, PrincipalID: principal, Key: key, RequestHash: hash}
		}

		var wg sync.WaitGroup
		var mu sync.Mutex
		won, inFlight := 0, 0
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prev, err := idempotency.New(s).ClaimKey(ctx, claim("key_a", "k1", "h1"), false)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && prev == nil:
					won++
				case apperr.Is(err, apperr.IdempotencyInFlight):
					inFlight++
				default:
					t.Errorf("unexpected claim result: %v %v", prev, err)
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, 1, won)
		assert.Equal(t, 19, inFlight)

		_, err := idempotency.New(s).ClaimKey(ctx, claim("key_a", "k1", "other"), false)
		assert.True(t, apperr.Is(err, apperr.IdempotencyReused))

		// The same key string from another caller is that caller's own.
		prev, err := idempotency.New(s).ClaimKey(ctx, claim("key_b", "k1", "h1"), false)
		require.NoError(t, err)
		assert.Nil(t, prev)

		require.NoError(t, s.CompleteIdempotencyKey(ctx, claim("key_a", "k1", "h1"), 201, "application/json", "", []byte(`{"a":1}`)))
		prev, err = idempotency.New(s).ClaimKey(ctx, claim("key_a", "k1", "h1"), false)
		require.NoError(t, err)
		require.NotNil(t, prev)
		assert.Equal(t, 201, prev.StatusCode)
		assert.Equal(t, `{"a":1}`, string(prev.ResponseBody))
		assert.NotEqual(t, claim("key_a", "k1", "h1").UpdateID(), claim("key_b", "k1", "h1").UpdateID())

		// A released claim lets the client retry.
		_, err = idempotency.New(s).ClaimKey(ctx, claim("key_a", "k2", "h"), false)
		require.NoError(t, err)
		require.NoError(t, s.ReleaseIdempotencyKey(ctx, claim("key_a", "k2", "h")))
		prev, err = idempotency.New(s).ClaimKey(ctx, claim("key_a", "k2", "h"), false)
		require.NoError(t, err)
		assert.Nil(t, prev)

		// An unfinished claim on a resumable route holds the key while its
		// lease runs, and lets a retry run once it has lapsed (its process
		// died).
		c := claim("key_a", "k2", "h")
		_, err = idempotency.New(s).ClaimKey(ctx, c, true)
		assert.True(t, apperr.Is(err, apperr.IdempotencyInFlight), "%v", err)
		lapse(t, db, "k2")
		prev, err = idempotency.New(s).ClaimKey(ctx, c, true)
		require.NoError(t, err)
		assert.Nil(t, prev)
		assert.True(t, c.Resumed)
	})
}

// lapse ends the lease of key's unfinished attempt, as its process dying
// does.
func lapse(t *testing.T, db *gorm.DB, key string) {
	t.Helper()
	require.NoError(t, db.Model(&models.IdempotencyKey{}).Where("idempotency_key = ?", key).
		Update("locked_until", models.Now().Add(-time.Second)).Error)
}

//
