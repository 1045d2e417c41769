package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createSchedule(c *gin.Context) {
	var in reports.ScheduleInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	sc, err := h.reports.CreateSchedule(c.Request.Context(), Principal(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/schedules/"+sc.ID)
	c.JSON(http.StatusCreated, wire.NewSchedule(sc))
}

func (h *handlers) listSchedules(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.reports.ListSchedules(c.Request.Context(), OrgID(c), c.Query("reportId"), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewSchedule))
}

func (h *handlers) getSchedule(c *gin.Context) {
	sc, err := h.reports.GetSchedule(c.Request.Context(), OrgID(c), c.Param("id"))
	h.respondSchedule(c, sc, err)
}

func (h *handlers) pauseSchedule(c *gin.Context) {
	sc, err := h.reports.PauseSchedule(c.Request.Context(), OrgID(c), Principal(c), c.Param("id"), true)
	h.respondSchedule(c, sc, err)
}

func (h *handlers) resumeSchedule(c *gin.Context) {
	sc, err := h.reports.PauseSchedule(c.Request.Context(), OrgID(c), Principal(c), c.Param("id"), false)
	h.respondSchedule(c, sc, err)
}

func (h *handlers) deleteSchedule(c *gin.Context) {
	if err := h.reports.DeleteSchedule(c.Request.Context(), OrgID(c), Principal(c), c.Param("id")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) respondSchedule(c *gin.Context, sc *reports.Schedule, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewSchedule(sc))
}
