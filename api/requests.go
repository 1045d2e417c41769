package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
)

// requestService is what every request kind's service offers alike, over
// its record T and its create's input In.
type requestService[T, In any] interface {
	Create(ctx context.Context, p accounts.Actor, in *In, claim *idempotency.Claim) (*T, error)
	Wait(ctx context.Context, orgID, id string, timeout time.Duration) (*T, error)
	Cancel(ctx context.Context, orgID, id, updateID string, who accounts.Actor) (*T, error)
	Head(rec *T) requests.Head
}

// requestRoutes are the routes every request kind serves alike under
// /api/v1/<path>: create, list, read (with ?wait=) and cancel, with the
// kind's read and write scopes. A kind's own acts (a decision, a reply, a
// verdict) are routes of its own beside them.
type requestRoutes[T, In, W any] struct {
	h                 *handlers
	path, read, write string
	service           requestService[T, In]
	// list lists the caller's requests of the kind, narrowed by the query.
	list func(c *gin.Context, p requests.Page) ([]T, string, error)
	// serialize is the kind's read; created its create's answer, the one
	// place its callback secret is shown.
	serialize, created func(rec *T, baseURL string) W
}

func (k requestRoutes[T, In, W]) mount(v1 *gin.RouterGroup) {
	base := "/" + k.path
	k.h.postResumable(v1, base, requireScope(k.write), k.create)
	v1.GET(base, requireScope(k.read), k.listed)
	v1.GET(base+"/:id", requireScope(k.read), k.get)
	k.h.postResumable(v1, base+"/:id/cancel", requireScope(k.write), noFields, k.cancel)
}

func (k requestRoutes[T, In, W]) create(c *gin.Context) {
	in := new(In)
	if err := bind(c, in); err != nil {
		fail(c, err)
		return
	}
	rec, err := k.service.Create(c.Request.Context(), principal(c), in, claim(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/"+k.path+"/"+k.service.Head(rec).ID)
	c.JSON(http.StatusCreated, k.created(rec, k.h.baseURL))
}

func (k requestRoutes[T, In, W]) listed(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	rows, next, err := k.list(c, p)
	k.respondList(c, rows, next, err)
}

// respondList writes rows, a page of the kind's requests, next the
// cursor of the page after.
func (k requestRoutes[T, In, W]) respondList(c *gin.Context, rows []T, next string, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(rec *T) W { return k.serialize(rec, k.h.baseURL) }))
}

// get returns the request; with ?wait= it first waits for it to settle.
func (k requestRoutes[T, In, W]) get(c *gin.Context) {
	wait, done, err := k.h.longPoll(c)
	if err != nil {
		fail(c, err)
		return
	}
	defer done()
	rec, err := k.service.Wait(c.Request.Context(), orgID(c), c.Param("id"), wait)
	k.respond(c, rec, err)
}

func (k requestRoutes[T, In, W]) cancel(c *gin.Context) {
	rec, err := k.service.Cancel(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c))
	k.respond(c, rec, err)
}

// respond writes rec, the request as an act or a read left it.
func (k requestRoutes[T, In, W]) respond(c *gin.Context, rec *T, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, k.serialize(rec, k.h.baseURL))
}
