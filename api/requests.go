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

// A Kind is a request kind's part of the API, which lives in the kind's
// folder (approvals/rest) and serves through the API's kit: what every
// kind serves alike (RequestRoutes, InboxOf), the body's binding (Bind),
// who calls (Principal, OrgID), the Idempotency-Key's claim (Claim), an
// error's answer (Fail) and the routes' middleware (RequireScope,
// PersonActs, NoFields). The kinds are listed once, in the composition
// root (app), and mounted in the order listed.
type Kind interface {
	// Mount adds its routes to v1, the authenticated /api/v1 group.
	Mount(v1 *gin.RouterGroup, k *Kit)
	// Inbox is its part of GET /inbox.
	Inbox(k *Kit) InboxKind
}

// Kit is what a kind's routes serve through beside the package's
// functions: the public address and the POST every act is.
type Kit struct{ h *handlers }

// BaseURL is the public address links and read models start with.
func (k *Kit) BaseURL() string { return k.h.baseURL }

// PostResumable adds a POST whose Idempotency-Key resumes an attempt that
// failed halfway (a request's create and acts): the last of chain handles
// it, after the claim.
func (k *Kit) PostResumable(g *gin.RouterGroup, path string, chain ...gin.HandlerFunc) {
	k.h.postResumable(g, path, chain...)
}

// RequestService is what every request kind's service offers alike, over
// its record T and its create's input In.
type RequestService[T, In any] interface {
	Create(ctx context.Context, p accounts.Actor, in *In, claim *idempotency.Claim) (*T, error)
	Wait(ctx context.Context, orgID, id string, timeout time.Duration) (*T, error)
	Cancel(ctx context.Context, orgID, id, updateID string, who accounts.Actor) (*T, error)
	Head(rec *T) requests.Head
	List(ctx context.Context, who accounts.Actor, f requests.Filter, p requests.Page) ([]T, string, error)
}

// RequestRoutes are the routes every request kind serves alike under
// /api/v1/<Path>: create, list, read (with ?wait=) and cancel, with the
// kind's read and write scopes. A kind's own acts (a decision, a reply, a
// verdict) are routes of its own beside them, answering with Respond.
type RequestRoutes[T, In, W any] struct {
	Kit               *Kit
	Path, Read, Write string
	Service           RequestService[T, In]
	// Filter narrows a list by what the kind adds to what every kind has
	// (status, externalId, flowId); nil for nothing more.
	Filter func(c *gin.Context, common requests.RequestFilter) (requests.Filter, error)
	// Serialize is the kind's read; Created its create's answer, the one
	// place its callback secret is shown.
	Serialize, Created func(rec *T, baseURL string) W
}

// Mount adds the routes to v1.
func (k RequestRoutes[T, In, W]) Mount(v1 *gin.RouterGroup) {
	base := "/" + k.Path
	k.Kit.PostResumable(v1, base, RequireScope(k.Write), k.create)
	v1.GET(base, RequireScope(k.Read), k.listed)
	v1.GET(base+"/:id", RequireScope(k.Read), k.get)
	k.Kit.PostResumable(v1, base+"/:id/cancel", RequireScope(k.Write), NoFields, k.cancel)
}

func (k RequestRoutes[T, In, W]) create(c *gin.Context) {
	in := new(In)
	if err := Bind(c, in); err != nil {
		Fail(c, err)
		return
	}
	// A create writes none of its organisation's settings, so it may read
	// them from the process's copy.
	ctx := accounts.ForCreate(c.Request.Context(), Principal(c))
	rec, err := k.Service.Create(ctx, Principal(c), in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/"+k.Path+"/"+k.Service.Head(rec).ID)
	c.JSON(http.StatusCreated, k.Created(rec, k.Kit.BaseURL()))
}

func (k RequestRoutes[T, In, W]) listed(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	var f requests.Filter = requests.RequestFilter{Status: c.Query("status"), ExternalID: c.Query("externalId"), FlowID: c.Query("flowId")}
	if k.Filter != nil {
		if f, err = k.Filter(c, f.Common()); err != nil {
			Fail(c, err)
			return
		}
	}
	rows, next, err := k.Service.List(c.Request.Context(), Principal(c), f, p)
	k.RespondList(c, rows, next, err)
}

// RespondList writes rows, a page of the kind's requests, next the
// cursor of the page after.
func (k RequestRoutes[T, In, W]) RespondList(c *gin.Context, rows []T, next string, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(rec *T) W { return k.Serialize(rec, k.Kit.BaseURL()) }))
}

// get returns the request; with ?wait= it first waits for it to settle.
func (k RequestRoutes[T, In, W]) get(c *gin.Context) {
	wait, done, err := k.Kit.h.longPoll(c)
	if err != nil {
		Fail(c, err)
		return
	}
	defer done()
	rec, err := k.Service.Wait(c.Request.Context(), OrgID(c), c.Param("id"), wait)
	k.Respond(c, rec, err)
}

func (k RequestRoutes[T, In, W]) cancel(c *gin.Context) {
	rec, err := k.Service.Cancel(c.Request.Context(), OrgID(c), c.Param("id"), Claim(c).UpdateID(), Principal(c))
	k.Respond(c, rec, err)
}

// Act is the handler of a kind's own act (a decision, a reply, a
// verdict): it binds the body into an A, calls do and answers with the
// request as the act left it.
func Act[T, In, W, A any](k RequestRoutes[T, In, W], do func(c *gin.Context, in A) (*T, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		var in A
		if err := Bind(c, &in); err != nil {
			Fail(c, err)
			return
		}
		rec, err := do(c, in)
		k.Respond(c, rec, err)
	}
}

// Respond writes rec, the request as an act or a read left it.
func (k RequestRoutes[T, In, W]) Respond(c *gin.Context, rec *T, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, k.Serialize(rec, k.Kit.BaseURL()))
}
