package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/wire"
)

// Standing mandates: a member grants one (gate.Service.Grant); members
// read and revoke their own, administrators and admin keys the
// organisation's. Agent keys are refused by the service.

func (h *handlers) grantMandate(c *gin.Context) {
	var in gate.GrantInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	m, err := h.gate.Grant(c.Request.Context(), principal(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/mandates/"+m.ID)
	c.JSON(http.StatusCreated, wire.NewMandate(m, h.baseURL))
}

func (h *handlers) listMandates(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	live, err := boolParam(c, "live")
	if err != nil {
		fail(c, err)
		return
	}
	f := gate.MandateFilter{Live: live != nil && *live}
	rows, next, err := h.gate.Mandates(c.Request.Context(), principal(c), f, p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, h.mandate))
}

func (h *handlers) getMandate(c *gin.Context) {
	m, err := h.gate.Mandate(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, h.mandate(m))
}

func (h *handlers) revokeMandate(c *gin.Context) {
	m, err := h.gate.Revoke(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, h.mandate(m))
}

func (h *handlers) mandate(m *gate.Mandate) wire.Mandate { return wire.NewMandate(m, h.baseURL) }
