package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/wire"
)

// A member's delegation while away: member tokens only, each its own
// person's (the service refuses keys).

func (h *handlers) putDelegation(c *gin.Context) {
	var in delegations.SetInput
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	if _, err := h.delegations.Set(c.Request.Context(), principal(c), in); err != nil {
		fail(c, err)
		return
	}
	h.myDelegation(c)
}

func (h *handlers) endDelegation(c *gin.Context) {
	if err := h.delegations.End(c.Request.Context(), principal(c)); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// myDelegation answers with the caller's delegation and those naming
// them: GET, and the answer to a PUT.
func (h *handlers) myDelegation(c *gin.Context) {
	mine, toMe, err := h.delegations.Mine(c.Request.Context(), principal(c))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewMyDelegation(mine, toMe))
}
