package push_test

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
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/push"
)

type env struct {
	store *models.Store
	// svc admits push services on this machine, as in dev; public holds
	// them to the production policy.
	svc, public *push.Service
}

type org = testenv.People

func eachDB(t *testing.T, tests map[string]func(t *testing.T, e *env, o *org)) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		store := models.NewStore(db, testenv.Keys())
		e := &env{store: store, svc: push.New(store.PushStore, netguard.DevLoopback), public: push.New(store.PushStore, nil)}
		for name, test := range tests {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				test(t, e, testenv.NewPeople(t, store, "agent"))
			})
		}
	})
}

// browser is a fresh subscription as a browser makes one: a P-256 key, a
// 16-byte secret and an endpoint of its own at a push service on this
// machine.
func browser(t *testing.T) models.NewPushSubscription {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	return models.NewPushSubscription{Endpoint: "http://127.0.0.1:8443/push/" + ids.New("sub"),
		P256dh: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), Auth: base64.RawURLEncoding.EncodeToString(auth)}
}

// session signs p in, as the subscription is made in a session.
func (e *env) session(t *testing.T, p *models.Person) *models.Session {
	t.Helper()
	sess, _, err := accounts.New(e.store).CreateSession(context.Background(), p.Organization.ID, p.ID())
	require.NoError(t, err)
	return sess
}

func TestPush(t *testing.T) {
	eachDB(t, map[string]func(*testing.T, *env, *org){
		"the public key is made once and kept": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			k, err := e.svc.PublicKey(ctx)
			require.NoError(t, err)
			raw, err := base64.RawURLEncoding.DecodeString(k)
			require.NoError(t, err)
			_, err = ecdh.P256().NewPublicKey(raw)
			require.NoError(t, err, "an uncompressed P-256 point, as browsers take it")
			again, err := e.public.PublicKey(ctx)
			require.NoError(t, err)
			assert.Equal(t, k, again)
		},
		"a subscription is its person's until they turn it off": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			b := browser(t)
			require.NoError(t, e.svc.Subscribe(ctx, o.Bob.Actor(), e.session(t, o.Bob).ID, b))
			on, err := e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.True(t, on)

			require.NoError(t, e.svc.Unsubscribe(ctx, o.Cy.Actor(), b.Endpoint), "someone else's: nothing to do")
			on, err = e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.True(t, on, "Cy cannot turn Bob's off")

			require.NoError(t, e.svc.Unsubscribe(ctx, o.Bob.Actor(), b.Endpoint))
			on, err = e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.False(t, on)
		},
		"a browser subscribed again by someone else is theirs": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			b := browser(t)
			require.NoError(t, e.svc.Subscribe(ctx, o.Bob.Actor(), e.session(t, o.Bob).ID, b))
			again := browser(t)
			again.Endpoint = b.Endpoint
			require.NoError(t, e.svc.Subscribe(ctx, o.Gus.Actor(), e.session(t, o.Gus).ID, again))

			on, err := e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.False(t, on)
			on, err = e.svc.Subscribed(ctx, o.Gus.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.True(t, on)
			subs, err := e.store.PushSubscriptions(ctx, o.ID, o.Gus.ID())
			require.NoError(t, err)
			require.Len(t, subs, 1)
			assert.Equal(t, again.P256dh, subs[0].P256dh, "with the new keys")
		},
		"signing out ends the subscription made in that session": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			b := browser(t)
			sess := e.session(t, o.Bob)
			require.NoError(t, e.svc.Subscribe(ctx, o.Bob.Actor(), sess.ID, b))
			require.NoError(t, e.store.DeleteSession(ctx, o.ID, sess.ID))
			on, err := e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.False(t, on)
		},
		"a subscription that is not a browser's is refused": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			sess := e.session(t, o.Bob)
			for name, c := range map[string]struct {
				change func(*models.NewPushSubscription)
				says   string
			}{
				"no endpoint":  {func(n *models.NewPushSubscription) { n.Endpoint = "" }, "endpoint is not a push service's URL"},
				"not a URL":    {func(n *models.NewPushSubscription) { n.Endpoint = "ftp://push.example/x" }, "endpoint is not a push service's URL"},
				"bad key":      {func(n *models.NewPushSubscription) { n.P256dh = "AAAA" }, "p256dh key is not an uncompressed P-256 point"},
				"short secret": {func(n *models.NewPushSubscription) { n.Auth = "AAAA" }, "auth secret is not 16 bytes"},
			} {
				b := browser(t)
				c.change(&b)
				err := e.svc.Subscribe(ctx, o.Bob.Actor(), sess.ID, b)
				ae := testenv.Refused(t, err, apperr.InvalidRequest, "")
				assert.Contains(t, ae.Message, c.says, name)
			}
		},
		"an endpoint the network policy forbids is refused": func(t *testing.T, e *env, o *org) {
			ctx := context.Background()
			b := browser(t)
			err := e.public.Subscribe(ctx, o.Bob.Actor(), e.session(t, o.Bob).ID, b)
			ae := testenv.Refused(t, err, apperr.InvalidRequest, "")
			assert.Contains(t, ae.Message, "the subscription's endpoint cannot be reached")
			on, err := e.svc.Subscribed(ctx, o.Bob.Actor(), b.Endpoint)
			require.NoError(t, err)
			assert.False(t, on, "nothing stored")
		},
	})
}
