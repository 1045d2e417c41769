package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/wire"
)

func (h *handlers) createReview(c *gin.Context) {
	var in reviews.CreateInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.reviews.Create(c.Request.Context(), principal(c), &in, claim(c))
	if err != nil {
		fail(c, err)
		return
	}
	out := reviews.NewWire(rec, h.baseURL)
	out.CallbackSecret = rec.CallbackSecret
	c.Header("Location", "/api/v1/reviews/"+rec.ID)
	c.JSON(http.StatusCreated, out)
}

func (h *handlers) listReviews(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := reviews.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId"), FlowID: c.Query("flowId"), ReportID: c.Query("reportId")}
	rows, next, err := h.reviews.List(c.Request.Context(), principal(c), f, p)
	h.respondReviews(c, rows, next, err)
}

func (h *handlers) respondReviews(c *gin.Context, rows []reviews.Review, next string, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, func(r *reviews.Review) reviews.Wire { return reviews.NewWire(r, h.baseURL) }))
}

// getReview returns the review; with ?wait= it first waits for it to
// settle.
func (h *handlers) getReview(c *gin.Context) {
	wait, done, err := h.longPoll(c)
	if err != nil {
		fail(c, err)
		return
	}
	defer done()
	rec, err := h.reviews.Wait(c.Request.Context(), orgID(c), c.Param("id"), wait)
	h.respondReview(c, rec, err)
}

func (h *handlers) cancelReview(c *gin.Context) {
	rec, err := h.reviews.Cancel(c.Request.Context(), orgID(c), c.Param("id"), claim(c).UpdateID(), principal(c))
	h.respondReview(c, rec, err)
}

// reviewVerdict is a reviewer's verdict; only a person (a member token)
// gives one.
func (h *handlers) reviewVerdict(c *gin.Context) {
	var in reviews.VerdictInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.reviews.Verdict(c.Request.Context(), principal(c), c.Param("id"), claim(c).UpdateID(), in)
	h.respondReview(c, rec, err)
}

func (h *handlers) respondReview(c *gin.Context, rec *reviews.Review, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, reviews.NewWire(rec, h.baseURL))
}
