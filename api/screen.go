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
	m, err := h.admin.ModelScreen(c.Request.Context(), OrgID(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewModelScreen(m))
}

func (h *handlers) putModelScreen(c *gin.Context) {
	var in admin.ModelScreenSettings
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	m, err := h.admin.SaveModelScreen(c.Request.Context(), OrgID(c), Principal(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewModelScreen(m))
}

func (h *handlers) deleteModelScreen(c *gin.Context) {
	if err := h.admin.DisableModelScreen(c.Request.Context(), OrgID(c)); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
