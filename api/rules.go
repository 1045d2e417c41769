package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createRule(c *gin.Context) {
	var in admin.NewRule
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	r, err := h.admin.CreateRule(c.Request.Context(), orgID(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewRule(r))
}

func (h *handlers) listRules(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	rows, next, err := h.admin.ListRules(c.Request.Context(), orgID(c), p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewRule))
}

type rulePatch struct {
	Enabled *bool `json:"enabled" validate:"required"`
}

func (h *handlers) updateRule(c *gin.Context) {
	var in rulePatch
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	r, err := h.admin.SetRuleEnabled(c.Request.Context(), orgID(c), c.Param("id"), *in.Enabled)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewRule(r))
}

func (h *handlers) deleteRule(c *gin.Context) {
	if err := h.admin.DeleteRule(c.Request.Context(), orgID(c), c.Param("id")); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
