package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/pushtest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// pushForm is a browser's subscription as the inbox's script posts it.
func pushForm(csrf string, b *pushtest.Browser) url.Values {
	return url.Values{"csrf": {csrf}, "endpoint": {b.Endpoint}, "p256dh": {b.P256dh}, "auth": {b.Auth}}
}

// TestPushSubscriptionRoutes: the inbox offers "Notify me" with the
// instance's VAPID public key under a policy that lets its script run and
// register the worker; the subscribe, status and unsubscribe routes need
// the session's CSRF token, store one subscription per browser for the
// signed-in person, refuse bad keys and endpoints the network policy
// refuses, and let a person turn off only their own browsers.
func TestPushSubscriptionRoutes(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{}, app.Deps{NetPolicy: netguard.DevLoopback})
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		svc := pushtest.New(t)
		laptop, phone := svc.Subscribe(t), svc.Subscribe(t)

		ada := s.browser(t)
		csrf := ada.signIn(s, "ada@example.com")
		inbox := ada.get("/inbox")
		vapid, _, err := s.store.VAPIDKey(ctx)
		require.NoError(t, err)
		assert.Contains(t, inbox.body, `data-key="`+vapid+`"`)
		assert.Contains(t, inbox.body, `<script src="/static/push.js" defer></script>`)
		assert.Contains(t, inbox.body, `id="push" `, "the offer")
		assert.Regexp(t, `id="push"[^>]* hidden>`, inbox.body, "hidden until the script shows it")
		policy := inbox.header.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "worker-src 'self'", "frame-ancestors 'none'"} {
			assert.Contains(t, policy, d)
		}
		assert.NotContains(t, ada.get("/history").header.Get("Content-Security-Policy"), "script-src", "other pages run no script")

		worker := ada.get("/push-worker.js")
		assert.Equal(t, http.StatusOK, worker.status)
		assert.Equal(t, "text/javascript; charset=utf-8", worker.header.Get("Content-Type"))
		assert.Contains(t, worker.body, `addEventListener("push"`)
		assert.Contains(t, ada.get("/static/push.js").body, "pushManager.subscribe")

		r := ada.post("/push/subscriptions", pushForm("wrong", laptop))
		assert.Equal(t, http.StatusForbidden, r.status, "without the CSRF token")
		r = s.browser(t).post("/push/subscriptions", pushForm(csrf, laptop))
		assert.Equal(t, http.StatusForbidden, r.status, "signed out")

		require.Equal(t, http.StatusNoContent, ada.post("/push/subscriptions", pushForm(csrf, laptop)).status)
		require.Equal(t, http.StatusNoContent, ada.post("/push/subscriptions", pushForm(csrf, phone)).status)
		require.Equal(t, http.StatusNoContent, ada.post("/push/subscriptions", pushForm(csrf, phone)).status, "again")
		subs, err := s.store.PushSubscriptions(ctx, s.org.ID, s.ada.ID)
		require.NoError(t, err)
		require.Len(t, subs, 2, "one per browser")
		assert.Equal(t, laptop.Endpoint, subs[0].Endpoint)
		assert.Equal(t, laptop.P256dh, subs[0].P256dh)
		assert.Equal(t, laptop.Auth, subs[0].Auth)

		bad := pushForm(csrf, svc.Subscribe(t))
		bad.Set("p256dh", laptop.Auth)
		r = ada.post("/push/subscriptions", bad)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, "p256dh")
		bad = pushForm(csrf, laptop)
		bad.Set("endpoint", "http://10.0.0.1/push/x")
		r = ada.post("/push/subscriptions", bad)
		assert.Equal(t, http.StatusBadRequest, r.status, "a private address")
		assert.Contains(t, r.body, "private or reserved")

		status := func(b *browser, csrf string, sub *pushtest.Browser) bool {
			r := b.post("/push/subscriptions/status", url.Values{"csrf": {csrf}, "endpoint": {sub.Endpoint}})
			require.Equal(t, http.StatusOK, r.status, r.body)
			var got struct{ Subscribed bool }
			require.NoError(t, json.Unmarshal([]byte(r.body), &got))
			return got.Subscribed
		}
		assert.True(t, status(ada, csrf, phone))

		bob := s.browser(t)
		bobCSRF := bob.signIn(s, "bob@example.com")
		assert.False(t, status(bob, bobCSRF, phone), "Ada's browser, not Bob's")
		require.Equal(t, http.StatusNoContent, bob.post("/push/subscriptions/delete", url.Values{"csrf": {bobCSRF}, "endpoint": {phone.Endpoint}}).status)
		assert.True(t, status(ada, csrf, phone), "Bob cannot turn off Ada's browser")

		require.Equal(t, http.StatusNoContent, ada.post("/push/subscriptions/delete", url.Values{"csrf": {csrf}, "endpoint": {phone.Endpoint}}).status)
		assert.False(t, status(ada, csrf, phone))
		subs, err = s.store.PushSubscriptions(ctx, s.org.ID, s.ada.ID)
		require.NoError(t, err)
		require.Len(t, subs, 1, "the other browser stays")
		assert.Equal(t, laptop.Endpoint, subs[0].Endpoint)
	})
}

// TestPushEndpointsFollowTheNetworkPolicy: under the production policy a
// subscription naming a push service on this machine is refused.
func TestPushEndpointsFollowTheNetworkPolicy(t *testing.T) {
	t.Parallel()
	s := newSite(t, testenv.OpenDB(t, "sqlite"))
	b := s.browser(t)
	csrf := b.signIn(s, "ada@example.com")
	r := b.post("/push/subscriptions", pushForm(csrf, pushtest.New(t).Subscribe(t)))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.body, "127.0.0.1 is a private or reserved address")
}
