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
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	m, err := h.gate.Grant(c.Request.Context(), Principal(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/mandates/"+m.ID)
	c.JSON(http.StatusCreated, wire.NewMandate(m, h.baseURL))
}

func (h *handlers) listMandates(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	live, err := BoolParam(c, "live")
	if err != nil {
		Fail(c, err)
		return
	}
	f := gate.MandateFilter{Live: live != nil && *live}
	rows, next, err := h.gate.Mandates(c.Request.Context(), Principal(c), f, p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, h.mandate))
}

func (h *handlers) getMandate(c *gin.Context) {
	m, err := h.gate.Mandate(c.Request.Context(), Principal(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, h.mandate(m))
}

func (h *handlers) revokeMandate(c *gin.Context) {
	m, err := h.gate.Revoke(c.Request.Context(), Principal(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, h.mandate(m))
}

func (h *handlers) mandate(m *gate.Mandate) wire.Mandate { return wire.NewMandate(m, h.baseURL) }
