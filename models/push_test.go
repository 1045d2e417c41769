package models_test

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// browserKeys are a subscription's keys as a browser makes them: a fresh
// P-256 point and a random 16-byte auth secret, base64url.
func browserKeys(t *testing.T) (p256dh, auth string) {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	return base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(secret)
}

// TestVAPIDKeyIsMadeOnceAndSealed: the first call makes the pair, later
// calls (and other processes) read the same one, and the stored private
// half is sealed.
func TestVAPIDKeyIsMadeOnceAndSealed(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		public, private, err := s.VAPIDKey(ctx)
		require.NoError(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(public)
		require.NoError(t, err)
		require.Len(t, raw, 65)
		d, err := base64.RawURLEncoding.DecodeString(private)
		require.NoError(t, err)
		key, err := ecdh.P256().NewPrivateKey(d)
		require.NoError(t, err)
		assert.Equal(t, raw, key.PublicKey().Bytes(), "the halves belong together")

		again, private2, err := models.NewStore(db, testenv.Keys()).VAPIDKey(ctx)
		require.NoError(t, err)
		assert.Equal(t, public, again)
		assert.Equal(t, private, private2)

		var stored string
		require.NoError(t, db.Raw("SELECT private_key FROM push_keys").Scan(&stored).Error)
		assert.NotContains(t, stored, private, "sealed at rest")
		n, err := s.ResealSecrets(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "already sealed under the current key")
	})
}

// TestPushSubscriptionsPerPerson: several browsers each, unique by
// endpoint (a browser subscribed again by someone else is theirs now),
// turned off per browser only by its owner, and removed as gone only
// while its keys are those the push was sent with.
func TestPushSubscriptionsPerPerson(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		member := func(email string) *models.Person {
			m, err := s.CreateMember(ctx, org.ID, email, "", "")
			require.NoError(t, err)
			return &models.Person{Organization: org, Member: m}
		}
		ada, bob := member("ada@example.com"), member("bob@example.com")
		sub := func(p *models.Person, endpoint string) *models.PushSubscription {
			p256dh, auth := browserKeys(t)
			got, err := s.SubscribePush(ctx, p, "", models.NewPushSubscription{Endpoint: endpoint, P256dh: p256dh, Auth: auth})
			require.NoError(t, err)
			return got
		}
		endpoints := func(p *models.Person) []string {
			subs, err := s.PushSubscriptions(ctx, org.ID, p.ID())
			require.NoError(t, err)
			var out []string
			for _, x := range subs {
				out = append(out, x.Endpoint)
			}
			return out
		}
		laptop := sub(ada, "https://push.example/laptop")
		sub(ada, "https://push.example/phone")
		assert.Equal(t, []string{"https://push.example/laptop", "https://push.example/phone"}, endpoints(ada))

		again := sub(ada, "https://push.example/laptop")
		assert.Equal(t, laptop.ID, again.ID, "one row per endpoint")
		assert.NotEqual(t, laptop.P256dh, again.P256dh, "with the browser's new keys")
		assert.Len(t, endpoints(ada), 2)

		require.NoError(t, s.RemovePushSubscription(ctx, laptop), "the old keys' subscription was replaced")
		assert.Len(t, endpoints(ada), 2, "so the replaced one stays")

		sub(bob, "https://push.example/phone")
		assert.Equal(t, []string{"https://push.example/laptop"}, endpoints(ada))
		assert.Equal(t, []string{"https://push.example/phone"}, endpoints(bob), "the browser is Bob's now")

		on, err := s.PushSubscribed(ctx, ada, "https://push.example/phone")
		require.NoError(t, err)
		assert.False(t, on)
		require.NoError(t, s.UnsubscribePush(ctx, ada, "https://push.example/phone"))
		assert.Len(t, endpoints(bob), 1, "Ada cannot turn off Bob's browser")
		require.NoError(t, s.UnsubscribePush(ctx, bob, "https://push.example/phone"))
		assert.Empty(t, endpoints(bob))

		require.NoError(t, s.RemovePushSubscription(ctx, again))
		assert.Empty(t, endpoints(ada), "gone at its push service")
	})
}

// TestSignOutEndsThePushSubscription: signing out ends the subscription
// made in that sign-in (a shared browser stops showing the person's
// requests), not those of the person's other browsers; a person removed
// loses them all.
func TestSignOutEndsThePushSubscription(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		m, err := s.CreateMember(ctx, org.ID, "ada@example.com", "", "")
		require.NoError(t, err)
		ada := &models.Person{Organization: org, Member: m}
		shared, _, err := accounts.New(s).CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		own, _, err := accounts.New(s).CreateSession(ctx, org.ID, m.ID)
		require.NoError(t, err)
		for session, endpoint := range map[string]string{shared.ID: "https://push.example/shared", own.ID: "https://push.example/own"} {
			p256dh, auth := browserKeys(t)
			_, err := s.SubscribePush(ctx, ada, session, models.NewPushSubscription{Endpoint: endpoint, P256dh: p256dh, Auth: auth})
			require.NoError(t, err)
		}
		require.NoError(t, s.DeleteSession(ctx, org.ID, shared.ID))
		subs, err := s.PushSubscriptions(ctx, org.ID, m.ID)
		require.NoError(t, err)
		require.Len(t, subs, 1)
		assert.Equal(t, "https://push.example/own", subs[0].Endpoint)

		inactive := false
		testenv.ChangeMember(t, s, org.ID, m.ID, func(m *models.Member) { m.Active = inactive })
		subs, err = s.PushSubscriptions(ctx, org.ID, m.ID)
		require.NoError(t, err)
		assert.Empty(t, subs, "a deactivated member's browsers are told nothing more")
	})
}
