package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/wire"
)

func (h *handlers) reportAnalytics(c *gin.Context) {
	p := Principal(c)
	out, err := h.reports.Analytics(c.Request.Context(), p, reportParam(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) organizationAnalytics(c *gin.Context) {
	pg, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	p := Principal(c)
	rows, next, err := h.reports.OrganizationAnalytics(c.Request.Context(), p, pg)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewReportReach))
}
