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
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	if _, err := h.delegations.Set(c.Request.Context(), Principal(c), in); err != nil {
		Fail(c, err)
		return
	}
	h.myDelegation(c)
}

func (h *handlers) endDelegation(c *gin.Context) {
	if err := h.delegations.End(c.Request.Context(), Principal(c)); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// myDelegation answers with the caller's delegation and those naming
// them: GET, and the answer to a PUT.
func (h *handlers) myDelegation(c *gin.Context) {
	mine, toMe, err := h.delegations.Mine(c.Request.Context(), Principal(c))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewMyDelegation(mine, toMe))
}
