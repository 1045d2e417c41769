package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
)

// resolvedAudience says what each phrase of an audience means.
type resolvedAudience struct {
	Audience []requests.Match `json:"audience"`
}

func (h *handlers) resolveAudience(c *gin.Context) {
	var in reports.AudienceInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	matches, err := h.reports.ResolveAudience(c.Request.Context(), orgID(c), &in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, resolvedAudience{Audience: matches})
}

func (h *handlers) shareReport(c *gin.Context) {
	var in reports.AudienceInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.reports.Share(c.Request.Context(), orgID(c), principal(c), reportParam(c), &in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) unshareReport(c *gin.Context) {
	var in reports.AudienceInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.reports.Unshare(c.Request.Context(), orgID(c), principal(c), reportParam(c), &in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) sendReport(c *gin.Context) {
	var in reports.SendInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	out, err := h.reports.Send(c.Request.Context(), principal(c), reportParam(c), &in, claim(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, out)
}
