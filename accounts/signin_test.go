package accounts_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func TestSignInLinksOnePerPersonAcrossOrganisations(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := accounts.New(s)
		a, b, c := testenv.NewOrg(t, s), testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		m, err := s.CreateMember(ctx, a.ID, "ada@example.com", "Ada", "")
		require.NoError(t, err)
		g, _, err := s.CreateGuest(ctx, b.ID, "ada@example.com", "")
		require.NoError(t, err)
		// An inactive member of a third organisation gets no link.
		off, err := s.CreateMember(ctx, c.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		testenv.ChangeMember(t, s, c.ID, off.ID, func(m *models.Member) { m.Active = false })

		links, err := svc.CreateSignInLinks(ctx, "  ADA@example.com ")
		require.NoError(t, err)
		require.Len(t, links, 2)
		got := map[string]string{}
		for _, l := range links {
			assert.Len(t, l.Token, 43, "32 bytes, URL-safe base64")
			assert.NotContains(t, l.Token, "=")
			assert.WithinDuration(t, time.Now().Add(models.SignInLinkLifetime), l.ExpiresAt, 5*time.Second)
			got[l.Person.ID()] = l.Person.Organization.ID
		}
		assert.Equal(t, map[string]string{m.ID: a.ID, g.ID: b.ID}, got)

		// Only the hash is stored.
		var stored []string
		require.NoError(t, db.Model(&models.SignInLink{}).Order("token_hash").Pluck("token_hash", &stored).Error)
		assert.ElementsMatch(t, []string{models.HashSecret(links[0].Token), models.HashSecret(links[1].Token)}, stored)

		none, err := svc.CreateSignInLinks(ctx, "nobody@example.com")
		require.NoError(t, err, "an unknown address is no error")
		assert.Empty(t, none)
	})
}

func TestSignInLinkExpiresAndRefusesDeactivatedMembers(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := accounts.New(s)
		org := testenv.NewOrg(t, s)
		m, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		links, err := svc.CreateSignInLinks(ctx, "ada@example.com")
		require.NoError(t, err)
		old := links[0].Token

		require.NoError(t, db.Model(&models.SignInLink{}).Where("token_hash = ?", models.HashSecret(old)).
			Update("expires_at", models.Now().Add(-time.Second)).Error)
		_, err = svc.ConsumeSignInLink(ctx, old)
		assert.ErrorIs(t, err, accounts.ErrSignInLinkExpired)

		links, err = svc.CreateSignInLinks(ctx, "ada@example.com")
		require.NoError(t, err)
		fresh := links[0].Token
		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = false })
		_, err = svc.ConsumeSignInLink(ctx, fresh)
		assert.ErrorIs(t, err, accounts.ErrPersonInactive)

		// Reactivated, the unused link still works: the refusal used nothing up.
		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = true })
		p, err := svc.ConsumeSignInLink(ctx, fresh)
		require.NoError(t, err)
		assert.Equal(t, m.ID, p.ID())
	})
}

func TestSignInLinksAreCappedPerPerson(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := accounts.New(s)
		org := testenv.NewOrg(t, s)
		_, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		issued := 0
		for range 8 {
			links, err := svc.CreateSignInLinks(ctx, "ada@example.com")
			require.NoError(t, err)
			issued += len(links)
		}
		assert.Equal(t, 5, issued, "a person holds at most five unused links")
	})
}

func TestSessionsEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		svc := accounts.New(s)
		org, other := testenv.NewOrg(t, s), testenv.NewOrg(t, s)
		m, err := s.CreateMember(ctx, org.ID, "ada@example.com", "Ada", "")
		require.NoError(t, err)
		g, _, err := s.CreateGuest(ctx, org.ID, "gus@example.com", "")
		require.NoError(t, err)

		sess, token, err := svc.CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		assert.NotEmpty(t, sess.CSRFSecret)
		assert.NotEqual(t, token, sess.CSRFSecret)
		assert.Equal(t, models.HashSecret(token), sess.TokenHash)
		assert.WithinDuration(t, time.Now().Add(models.SessionLifetime), sess.ExpiresAt, 5*time.Second)

		got, p, err := svc.LoadSession(ctx, token)
		require.NoError(t, err)
		assert.Equal(t, sess.ID, got.ID)
		assert.Equal(t, sess.CSRFSecret, got.CSRFSecret)
		a := p.Actor()
		assert.Equal(t, []any{m.ID, "Ada", true, p}, []any{a.ID, a.Name, a.IsPerson, a.Person})

		_, _, err = svc.LoadSession(ctx, "wrong")
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		_, _, err = svc.CreateSession(ctx, other.ID, m.ID)
		assert.Error(t, err, "a person of another organisation")

		// A guest signs in too.
		_, gtoken, err := svc.CreateSession(ctx, org.ID, g.ID)
		require.NoError(t, err)
		_, gp, err := svc.LoadSession(ctx, gtoken)
		require.NoError(t, err)
		ga := gp.Actor()
		assert.Equal(t, []any{g.ID, "gus@example.com", true, gp}, []any{ga.ID, ga.Name, ga.IsPerson, ga.Person})
		assert.Nil(t, gp.Member)

		// Idle: unused for the idle timeout, it ends; a touch keeps it alive.
		setSession(t, db, sess.ID, "last_seen_at", models.Now().Add(-models.SessionIdleTimeout+time.Hour))
		got, _, err = svc.LoadSession(ctx, token)
		require.NoError(t, err, "idle for less than the timeout")
		require.NoError(t, svc.TouchSession(ctx, got))
		got, _, err = svc.LoadSession(ctx, token)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(models.SessionIdleTimeout), got.EndsAt(), 5*time.Second, "a touch pushes the idle end back")
		setSession(t, db, sess.ID, "last_seen_at", models.Now().Add(-models.SessionIdleTimeout))
		_, _, err = svc.LoadSession(ctx, token)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)

		// Absolute: past its lifetime it ends however recently used.
		setSession(t, db, sess.ID, "last_seen_at", models.Now())
		setSession(t, db, sess.ID, "expires_at", models.Now().Add(-time.Second))
		_, _, err = svc.LoadSession(ctx, token)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		n, err := s.PurgeSignIns(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)

		// Deactivation takes a session's power; sign-out deletes it.
		sess, token, err = svc.CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = false })
		_, _, err = svc.LoadSession(ctx, token)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		_, _, err = svc.CreateSession(ctx, org.ID, m.ID)
		assert.ErrorIs(t, err, accounts.ErrPersonInactive)
		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = true })
		_, _, err = svc.LoadSession(ctx, token)
		require.NoError(t, err)
		require.NoError(t, svc.DeleteSession(ctx, org.ID, sess.ID))
		_, _, err = svc.LoadSession(ctx, token)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
	})
}

func setSession(t *testing.T, db *gorm.DB, id, column string, v time.Time) {
	t.Helper()
	require.NoError(t, db.Model(&models.Session{}).Where("id = ?", id).Update(column, v).Error)
}
