package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/wire"
)

type meResponse struct {
	Kind         string            `json:"kind"`
	KeyID        string            `json:"keyId"`
	Organization wire.Organization `json:"organization"`
	Scopes       []string          `json:"scopes"`
	Member       *wire.Member      `json:"member"`
}

// me says who the caller is.
func (h *handlers) me(c *gin.Context) {
	p := Principal(c)
	k := wire.NewKey(p.Key)
	out := meResponse{Kind: p.Key.Kind, KeyID: p.Key.ID, Organization: wire.NewOrganization(p.Organization), Scopes: k.Scopes}
	if p.Member() != nil {
		m := wire.NewMember(p.Member())
		out.Member = &m
	}
	c.JSON(http.StatusOK, out)
}
