// Package rest is the requests for information's part of the REST API
// (an api.Kind): what every kind serves, and a respondent's reply.
package rest

import (
	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
)

type routes struct{ collections *collections.Service }

// New returns the requests for information's routes over their service.
func New(s *collections.Service) api.Kind { return routes{s} }

type collectionRoutes = api.RequestRoutes[collections.Collection, collections.CreateInput, collections.Wire]

// common are what requests for information serve as every kind does.
func (r routes) common(k *api.Kit) collectionRoutes {
	return collectionRoutes{
		Kit: k, Path: "collections", Read: scopes.CollectionsRead, Write: scopes.CollectionsWrite, Service: r.collections,
		Serialize: collections.NewWire, Created: collections.NewCreated,
	}
}

func (r routes) Mount(v1 *gin.RouterGroup, k *api.Kit) {
	common := r.common(k)
	common.Mount(v1)
	// A respondent's reply (a draft or a submission): member tokens only;
	// the workflow decides who may.
	k.PostResumable(v1, "/collections/:id/replies", api.PersonActs(scopes.CollectionsWrite),
		api.Act(common, func(c *gin.Context, in collections.ReplyInput) (*collections.Collection, error) {
			return r.collections.Reply(c.Request.Context(), api.Principal(c), c.Param("id"), api.Claim(c).UpdateID(), in)
		}))
}

// Inbox: what needs attention first.
func (r routes) Inbox(k *api.Kit) api.InboxKind {
	return api.InboxOf(r.common(k), r.collections.Lifecycle, requests.Attention, nil)
}
