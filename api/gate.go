package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/wire"
)

// checkGate answers 200 allowed (with a decision token) or 202 with the
// approval a person must decide; a denial is 403 gate_denied.
func (h *handlers) checkGate(c *gin.Context) {
	var in gate.CheckInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	res, err := h.gate.Check(c.Request.Context(), Principal(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	status := http.StatusOK
	if res.Approval != nil {
		status = http.StatusAccepted
		c.Header("Location", "/api/v1/approvals/"+res.Approval.ID)
	}
	c.JSON(status, gate.NewAnswer(res, h.baseURL))
}

func (h *handlers) createAction(c *gin.Context) {
	var in gate.ActionInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	a, err := h.gate.CreateAction(c.Request.Context(), Principal(c).Organization, &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/admin/actions/"+a.ID)
	c.JSON(http.StatusCreated, wire.NewAction(a))
}

func (h *handlers) listActions(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.gate.ListActions(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewAction))
}

func (h *handlers) getAction(c *gin.Context) {
	a, err := h.gate.GetAction(c.Request.Context(), OrgID(c), c.Param("id"))
	respondAction(c, a, err)
}

func (h *handlers) updateAction(c *gin.Context) {
	var in gate.ActionInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	a, err := h.gate.UpdateAction(c.Request.Context(), Principal(c).Organization, c.Param("id"), &in)
	respondAction(c, a, err)
}

func respondAction(c *gin.Context, a *gate.Action, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewAction(a))
}

func (h *handlers) deleteAction(c *gin.Context) {
	if err := h.gate.DeleteAction(c.Request.Context(), OrgID(c), c.Param("id")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
