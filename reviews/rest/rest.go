// Package rest is the reviews' part of the REST API (an api.Kind): what
// every kind serves, and a reviewer's verdict.
package rest

import (
	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
)

type routes struct{ reviews *reviews.Service }

// New returns the reviews' routes over their service.
func New(s *reviews.Service) api.Kind { return routes{s} }

type reviewRoutes = api.RequestRoutes[reviews.Review, reviews.CreateInput, reviews.Wire]

// common are what reviews serve as every kind does.
func (r routes) common(k *api.Kit) reviewRoutes {
	return reviewRoutes{
		Kit: k, Path: "reviews", Read: scopes.ReviewsRead, Write: scopes.ReviewsWrite, Service: r.reviews,
		Filter: func(c *gin.Context, common requests.RequestFilter) (requests.Filter, error) {
			return reviews.Filter{RequestFilter: common, ReportID: c.Query("reportId")}, nil
		},
		Serialize: reviews.NewWire, Created: reviews.NewCreated,
	}
}

func (r routes) Mount(v1 *gin.RouterGroup, k *api.Kit) {
	common := r.common(k)
	common.Mount(v1)
	// A verdict is a person's act, like a reply.
	k.PostResumable(v1, "/reviews/:id/verdict", api.PersonActs(scopes.ReviewsWrite),
		api.Act(common, func(c *gin.Context, in reviews.VerdictInput) (*reviews.Review, error) {
			return r.reviews.Verdict(c.Request.Context(), api.Principal(c), c.Param("id"), api.Claim(c).UpdateID(), in)
		}))
}

// Inbox: what needs attention first.
func (r routes) Inbox(k *api.Kit) api.InboxKind {
	return api.InboxOf(r.common(k), r.reviews.Lifecycle, requests.Attention, nil)
}
