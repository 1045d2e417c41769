package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

type createFlowRequest struct {
	Title      string  `json:"title" validate:"required,notblank,max=200"`
	ExternalID *string `json:"externalId" validate:"omitempty,max=255"`
}

func (h *handlers) createFlow(c *gin.Context) {
	var in createFlowRequest
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	f, err := h.store.CreateFlow(c.Request.Context(), orgID(c), strings.TrimSpace(in.Title), in.ExternalID, principal(c).Actor())
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/flows/"+f.ID)
	h.respondFlow(c, http.StatusCreated, f.ID)
}

func (h *handlers) getFlow(c *gin.Context) { h.respondFlow(c, http.StatusOK, c.Param("id")) }

func (h *handlers) completeFlow(c *gin.Context) { h.finishFlow(c, models.FlowCompleted) }

func (h *handlers) cancelFlow(c *gin.Context) { h.finishFlow(c, models.FlowCancelled) }

func (h *handlers) finishFlow(c *gin.Context, to string) {
	f, err := h.store.FinishFlow(c.Request.Context(), orgID(c), c.Param("id"), to, principal(c).Actor(),
		func(d *models.FlowDetail) ([]byte, error) { return json.Marshal(wire.NewFlow(d, h.baseURL)) })
	if err != nil {
		fail(c, err)
		return
	}
	h.respondFlow(c, http.StatusOK, f.ID)
}

func (h *handlers) respondFlow(c *gin.Context, status int, id string) {
	d, err := h.store.GetFlowDetail(c.Request.Context(), orgID(c), id)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, wire.NewFlow(d, h.baseURL))
}
