package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/pushtest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
)

// standInPushManager replaces the page's PushManager subscribe and
// getSubscription with a subscription at the local push service (kept in
// localStorage, as a browser keeps it across loads), and records the
// applicationServerKey the page subscribed with. Headless chromium
// registers the service worker for real, but its PushManager.subscribe
// waits on the vendor's push service (Google's, for chromium), which the
// test machines cannot reach: it never settles.
const standInPushManager = `(function () {
  var made = %s;
  function stored() {
    var s = localStorage.getItem("standInSubscription");
    return s ? subscription(JSON.parse(s)) : null;
  }
  function subscription(key) {
    return {
      endpoint: made.endpoint,
      options: { userVisibleOnly: true, applicationServerKey: new Uint8Array(key).buffer },
      toJSON: function () { return { endpoint: made.endpoint, expirationTime: null, keys: { p256dh: made.p256dh, auth: made.auth } }; },
      unsubscribe: function () { localStorage.removeItem("standInSubscription"); return Promise.resolve(true); }
    };
  }
  PushManager.prototype.getSubscription = function () { return Promise.resolve(stored()); };
  PushManager.prototype.subscribe = function (options) {
    var key = Array.prototype.slice.call(new Uint8Array(options.applicationServerKey));
    localStorage.setItem("standInSubscription", JSON.stringify(key));
    return Promise.resolve(stored());
  };
})();`

// TestBrowserInboxNotifiesMe: on the inbox, "Notify me" registers the
// app's service worker (scope the whole app), subscribes with the served
// VAPID key and posts the subscription, and the control turns to "Stop
// notifying me", also after a reload; an approval for the person reaches
// the push service, encrypted to the subscription, and the service worker
// shows it titled with the request's title; "Stop notifying me" removes
// the subscription.
func TestBrowserInboxNotifiesMe(t *testing.T) {
	t.Parallel()
	browsertest.Require(t)
	db := testenv.OpenDB(t, "sqlite")
	s := newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{}, app.Deps{NetPolicy: netguard.DevLoopback})
	ctx := context.Background()
	svc := pushtest.New(t)
	phone := svc.Subscribe(t)
	made, err := json.Marshal(map[string]string{"endpoint": phone.Endpoint, "p256dh": phone.P256dh, "auth": phone.Auth})
	require.NoError(t, err)
	vapid, _, err := s.store.VAPIDKey(ctx)
	require.NoError(t, err)

	b := browsertest.New(t)
	registrations := watchServiceWorkers(t, b)
	b.Run(func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, cdppage.AddScriptToEvaluateOnNewDocument,
			cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: fmt.Sprintf(standInPushManager, made)})
		return chromedp.Void{}, err
	})
	_, err = chromedp.CallBrowser(b.Context(), cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: s.url})
	require.NoError(t, err)
	browserSignIn(t, s, b, "ada@example.com")
	b.Navigate(s.url + "/inbox")

	shown := func() bool { return eval[bool](t, b, `!document.getElementById("push").hidden`) }
	require.Eventually(t, shown, 5*time.Second, 50*time.Millisecond, "the script shows the offer")
	assert.Equal(t, "Notify me", b.Text("#push-toggle"))
	assert.False(t, eval[bool](t, b, `!!navigator.serviceWorker.controller`), "no worker yet")

	b.Run(chromedp.Click(chromedp.CSS("#push-toggle")))
	state := func(want string) func() bool {
		return func() bool { return eval[string](t, b, `document.getElementById("push").dataset.state || ""`) == want }
	}
	require.Eventually(t, state("on"), 10*time.Second, 50*time.Millisecond, b.Text("#push-status"))
	assert.Equal(t, "Stop notifying me", b.Text("#push-toggle"))
	assert.Contains(t, b.Text("#push-status"), "This browser is notified")
	worker, err := chromedp.Run(b.Context(), chromedp.Evaluate[map[string]string](`navigator.serviceWorker.getRegistration("/").then(r => ({
		scope: r.scope, script: (r.active || r.waiting || r.installing).scriptURL}))`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"scope": s.url + "/", "script": s.url + "/push-worker.js"}, worker)
	asked := eval[string](t, b, `btoa(String.fromCharCode.apply(null, JSON.parse(localStorage.getItem("standInSubscription"))))
		.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")`)
	assert.Equal(t, vapid, asked, "subscribed with the served VAPID key")
	subs, err := s.store.PushSubscriptions(ctx, s.org.ID, s.ada.ID)
	require.NoError(t, err)
	require.Len(t, subs, 1, "the page posted the subscription")
	assert.Equal(t, phone.Endpoint, subs[0].Endpoint)
	assert.Equal(t, phone.P256dh, subs[0].P256dh)

	b.Navigate(s.url + "/inbox")
	require.Eventually(t, shown, 5*time.Second, 50*time.Millisecond)
	require.Eventually(t, state("on"), 5*time.Second, 50*time.Millisecond, "after a reload the server confirms it")

	// An approval for Ada is pushed; the service worker shows it.
	a := s.approval(t, "Refund order 42", models.RiskHigh, time.Now().Add(time.Hour), s.ada.ID)
	n := &notify.Notifier{Store: s.store, BaseURL: s.url, Push: &notify.Push{HTTP: outbound.NewClient(netguard.DevLoopback), Subject: "assent@example.com"}}
	acts := &approvals.Activities{ActivityEnv: requests.ActivityEnv{Store: s.store, BaseURL: s.url, Notify: n}}
	require.NoError(t, acts.EmailApprovers(ctx, approvals.EmailApproversInput{OrganizationID: s.org.ID, ApprovalID: a.ID}))
	pushes := svc.To(phone)
	require.Len(t, pushes, 1)
	payload, err := phone.Decrypt(pushes[0].Body)
	require.NoError(t, err)
	_, err = pushtest.VerifyVAPID(pushes[0].Header, vapid, svc.URL, time.Now())
	require.NoError(t, err)

	// DevTools delivers the push's plaintext as the push service would
	// after decryption; a delivery to a worker still starting can be
	// lost, so it is sent again until the notification shows (one: each
	// replaces the last, by its tag).
	reg := registrations(s.url + "/")
	var notes []map[string]string
	tries := 0
	require.Eventually(t, func() bool {
		tries++
		b.Run(func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, serviceworker.DeliverPushMessage,
				serviceworker.DeliverPushMessageParams{Origin: s.url, RegistrationID: reg, Data: string(payload)})
			return chromedp.Void{}, err
		})
		time.Sleep(200 * time.Millisecond)
		notes, err = chromedp.Run(b.Context(), chromedp.Evaluate[[]map[string]string](`navigator.serviceWorker.getRegistration("/")
			.then(r => r.getNotifications()).then(ns => ns.map(n => ({title: n.title, body: n.body, url: n.data.url})))`, chromedp.EvalAwaitPromise))
		return err == nil && len(notes) == 1
	}, 15*time.Second, 100*time.Millisecond, "the service worker shows the push")
	assert.Equal(t, map[string]string{"title": "Refund order 42", "body": "Approval · high risk · waiting on you",
		"url": s.url + "/approvals/" + a.ID}, notes[0])

	b.Run(chromedp.Click(chromedp.CSS("#push-toggle")))
	require.Eventually(t, state("off"), 10*time.Second, 50*time.Millisecond, b.Text("#push-status"))
	assert.Equal(t, "Notify me", b.Text("#push-toggle"))
	subs, err = s.store.PushSubscriptions(ctx, s.org.ID, s.ada.ID)
	require.NoError(t, err)
	assert.Empty(t, subs, "turned off for this browser")
	// Last: without axe-core it skips.
	b.CheckAccessibility("the inbox with its Notify me")
}

// watchServiceWorkers enables the ServiceWorker domain on the tab and
// returns a func that waits for the registration of a scope and returns
// its id.
func watchServiceWorkers(t *testing.T, b *browsertest.Browser) func(scope string) serviceworker.RegistrationID {
	t.Helper()
	var mu sync.Mutex
	ids := map[string]serviceworker.RegistrationID{}
	require.NoError(t, chromedp.Listen(b.Context(), func(ev any) {
		if e, ok := ev.(*serviceworker.EventWorkerRegistrationUpdated); ok {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range e.Registrations {
				if !r.IsDeleted {
					ids[r.ScopeURL] = r.RegistrationID
				}
			}
		}
	}))
	b.Run(func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, serviceworker.Enable, cdp.Empty{})
		return chromedp.Void{}, err
	})
	return func(scope string) serviceworker.RegistrationID {
		t.Helper()
		var id serviceworker.RegistrationID
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			id = ids[scope]
			return id != ""
		}, 5*time.Second, 50*time.Millisecond, "no service worker registered for %s", scope)
		return id
	}
}
