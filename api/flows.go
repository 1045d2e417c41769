package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createFlow(c *gin.Context) {
	var in flows.CreateInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	f, err := h.flows.Create(c.Request.Context(), Principal(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/flows/"+f.ID)
	h.respondFlow(c, http.StatusCreated, f.ID)
}

func (h *handlers) getFlow(c *gin.Context) { h.respondFlow(c, http.StatusOK, c.Param("id")) }

func (h *handlers) completeFlow(c *gin.Context) {
	f, err := h.flows.Complete(c.Request.Context(), Principal(c), c.Param("id"))
	h.respondFinished(c, f, err)
}

func (h *handlers) cancelFlow(c *gin.Context) {
	f, err := h.flows.Cancel(c.Request.Context(), Principal(c), c.Param("id"))
	h.respondFinished(c, f, err)
}

func (h *handlers) respondFinished(c *gin.Context, f *flows.Flow, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	h.respondFlow(c, http.StatusOK, f.ID)
}

func (h *handlers) respondFlow(c *gin.Context, status int, id string) {
	d, err := h.flows.Detail(c.Request.Context(), Principal(c), id)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(status, wire.NewFlow(d, h.baseURL))
}
