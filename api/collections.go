package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createCollection(c *gin.Context) {
	var in collections.CreateInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.collections.Create(c.Request.Context(), principal(c), &in, claim(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := collections.NewWire(rec, h.baseURL)
	out.CallbackSecret = rec.CallbackSecret
	c.Header("Location", "/api/v1/collections/"+rec.ID)
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) listCollections(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := collections.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId"), FlowID: c.Query("flowId")}
	rows, next, err := h.collections.List(c.Request.Context(), principal(c), f, p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(r *collections.Collection) collections.Wire { return collections.NewWire(r, h.baseURL) }))
}

// getCollection returns the collection; with ?wait= it first waits for it
// to settle.
func (h *handlers) getCollection(c *gin.Context) {
	wait, done, err := h.longPoll(c)
	if err != nil {
		fail(c, err)
		return
	}
	defer done()
	rec, err := h.collections.Wait(c.Request.Context(), orgID(c), c.Param("id"), wait)
	h.respondCollection(c, rec, err)
}

func (h *handlers) cancelCollection(c *gin.Context) {
	rec, err := h.collections.Cancel(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c))
	h.respondCollection(c, rec, err)
}

// replyToCollection saves a respondent's draft or submits their reply;
// only a person (a member token) replies.
func (h *handlers) replyToCollection(c *gin.Context) {
	var in collections.ReplyInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.collections.Reply(c.Request.Context(), principal(c), c.Param("id"), claim(c).UpdateID(), in)
	h.respondCollection(c, rec, err)
}

func (h *handlers) respondCollection(c *gin.Context, rec *collections.Collection, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, collections.NewWire(rec, h.baseURL))
}
