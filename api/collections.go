package api

import (
	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/requests"
)

// collectionRoutes are what requests for information serve as every kind
// does (requestRoutes).
func (h *handlers) collectionRoutes() requestRoutes[collections.Collection, collections.CreateInput, collections.Wire] {
	return requestRoutes[collections.Collection, collections.CreateInput, collections.Wire]{
		h: h, path: "collections", read: scopes.CollectionsRead, write: scopes.CollectionsWrite, service: h.collections,
		list: func(c *gin.Context, p requests.Page) ([]collections.Collection, string, error) {
			f := collections.Filter{Status: c.Query("status"), ExternalID: c.Query("externalId"), FlowID: c.Query("flowId")}
			return h.collections.List(c.Request.Context(), principal(c), f, p)
		},
		serialize: collections.NewWire, created: collections.NewCreated,
	}
}

// replyToCollection saves a respondent's draft or submits their reply;
// only a person (a member token) replies.
func (h *handlers) replyToCollection(c *gin.Context) {
	var in collections.ReplyInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	rec, err := h.collections.Reply(c.Request.Context(), principal(c), c.Param("id"), claim(c).UpdateID(), in)
	h.collectionRoutes().respond(c, rec, err)
}
