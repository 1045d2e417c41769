package api

import (
	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

// reviewRoutes are what reviews serve as every kind does (requestRoutes).
func (h *handlers) reviewRoutes() requestRoutes[reviews.Review, reviews.CreateInput, reviews.Wire] {
	return requestRoutes[reviews.Review, reviews.CreateInput, reviews.Wire]{
		h: h, path: "reviews", read: scopes.ReviewsRead, write: scopes.ReviewsWrite, service: h.reviews,
		list: func(c *gin.Context, p requests.Page) ([]reviews.Review, string, error) {
			f := reviews.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId"), FlowID: c.Query("flowId"), ReportID: c.Query("reportId")}
			return h.reviews.List(c.Request.Context(), principal(c), f, p)
		},
		serialize: reviews.NewWire, created: reviews.NewCreated,
	}
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
	h.reviewRoutes().respond(c, rec, err)
}
