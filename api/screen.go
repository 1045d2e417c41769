package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/wire"
)

// The organisation's model screen (admin): its endpoint, its model, and
// whether its key is set, never the key.

func (h *handlers) getModelScreen(c *gin.Context) {
	m, err := h.admin.ModelScreen(c.Request.Context(), orgID(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewModelScreen(m))
}

func (h *handlers) putModelScreen(c *gin.Context) {
	var in admin.ModelScreenSettings
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	m, err := h.admin.SaveModelScreen(c.Request.Context(), orgID(c), principal(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewModelScreen(m))
}

func (h *handlers) deleteModelScreen(c *gin.Context) {
	if err := h.admin.DisableModelScreen(c.Request.Context(), orgID(c)); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
