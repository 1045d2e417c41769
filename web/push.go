package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/push"
)

// The inbox's "Notify me": push.js registers the service worker
// (push-worker.js, served from the root so its scope is the whole app),
// subscribes the browser with the instance's VAPID public key and posts
// the subscription here; push-worker.js shows each push. Without
// JavaScript the control stays hidden and nothing changes.

// pushWorkerPath is where the service worker is served; at the root, its
// scope is the app without a Service-Worker-Allowed header.
const pushWorkerPath = "/push-worker.js"

// pushScripts let the inbox run push.js, post the subscription with
// fetch, and register the service worker, all from this origin only.
var pushScripts = []string{"script-src 'self'", "connect-src 'self'", "worker-src 'self'"}

// servePushWorker serves the service worker. It fetches nothing, so its
// own policy allows nothing.
func servePushWorker() gin.HandlerFunc {
	script := serveScript("push-worker.js")
	return func(c *gin.Context) {
		c.Header("Content-Security-Policy", "default-src 'none'")
		script(c)
	}
}

// pushForm is a subscription as push.js posts it, from the browser's
// PushSubscription.toJSON().
func pushForm(c *gin.Context) push.Subscription {
	return push.Subscription{Endpoint: c.PostForm("endpoint"), P256dh: c.PostForm("p256dh"), Auth: c.PostForm("auth")}
}

// subscribePush stores the signed-in person's browser's subscription,
// made in this session (push.Service checks it).
func (p *Pages) subscribePush(c *gin.Context) {
	if err := p.push.Subscribe(c.Request.Context(), currentActor(c), currentSession(c).ID, pushForm(c)); err != nil {
		p.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// unsubscribePush turns pushes off for the browser whose endpoint is
// posted, if it is the signed-in person's.
func (p *Pages) unsubscribePush(c *gin.Context) {
	if err := p.push.Unsubscribe(c.Request.Context(), currentActor(c), c.PostForm("endpoint")); err != nil {
		p.Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// pushStatus says whether the browser whose endpoint is posted is
// subscribed for the signed-in person (it may be someone else's, who used
// this browser before).
func (p *Pages) pushStatus(c *gin.Context) {
	on, err := p.push.Subscribed(c.Request.Context(), currentActor(c), c.PostForm("endpoint"))
	if err != nil {
		p.Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"subscribed": on})
}
