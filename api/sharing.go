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
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	matches, err := h.reports.ResolveAudience(c.Request.Context(), OrgID(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, resolvedAudience{Audience: matches})
}

func (h *handlers) shareReport(c *gin.Context) {
	var in reports.AudienceInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	out, err := h.reports.Share(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) unshareReport(c *gin.Context) {
	var in reports.AudienceInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	out, err := h.reports.Unshare(c.Request.Context(), OrgID(c), Principal(c), reportParam(c), &in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (h *handlers) sendReport(c *gin.Context) {
	var in reports.SendInput
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	out, err := h.reports.Send(c.Request.Context(), Principal(c), reportParam(c), &in, Claim(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, out)
}
