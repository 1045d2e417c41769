package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createRule(c *gin.Context) {
	var in admin.NewRule
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, err := h.admin.CreateRule(c.Request.Context(), OrgID(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewRule(r))
}

func (h *handlers) listRules(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.ListRules(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewRule))
}

type rulePatch struct {
	Enabled *bool `json:"enabled" validate:"required"`
}

func (h *handlers) updateRule(c *gin.Context) {
	var in rulePatch
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	r, err := h.admin.SetRuleEnabled(c.Request.Context(), OrgID(c), c.Param("id"), *in.Enabled)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewRule(r))
}

func (h *handlers) deleteRule(c *gin.Context) {
	if err := h.admin.DeleteRule(c.Request.Context(), OrgID(c), c.Param("id")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
