package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/wire"
	"github.com/assent-hq/assent/models"
)

func (h *handlers) createRule(c *gin.Context) {
	var in models.NewRule
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	if err := checkRule(&in); err != nil {
		fail(c, err)
		return
	}
	r, err := h.store.CreateRule(c.Request.Context(), orgID(c), in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewRule(r))
}

// checkRule requires what each kind needs and a condition that compiles to
// a bool, so a broken rule is refused when saved, not when a request comes.
func checkRule(in *models.NewRule) error {
	switch in.Kind {
	case rules.KindApproval:
		if in.RequiredApprovals == 0 {
			return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "an approval rule needs requiredApprovals, from 2 to 20")
		}
	case rules.KindEthics:
		if in.Principle == "" {
			return apperr.Field(apperr.InvalidRequest, "principle", "an ethics rule needs the principle it protects")
		}
		if in.Concern == "" {
			return apperr.Field(apperr.InvalidRequest, "concern", "an ethics rule needs the concern approvers read first")
		}
	case rules.KindRestricted:
		if len(in.Fields) == 0 {
			return apperr.Field(apperr.InvalidRequest, "fields", "a restricted-fields rule needs the fields it hides")
		}
	}
	if in.Kind != rules.KindApproval && in.RequiredApprovals != 0 {
		return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "requiredApprovals belongs to approval rules")
	}
	if in.Condition != "" {
		if err := rules.Check(in.Condition); err != nil {
			return apperr.Field(apperr.InvalidRequest, "condition", "%v", err)
		}
	}
	return nil
}

func (h *handlers) listRules(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		fail(c, err)
		return
	}
	rows, next, err := h.store.ListRules(c.Request.Context(), orgID(c), p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, newList(rows, next, wire.NewRule))
}

type rulePatch struct {
	Enabled *bool `json:"enabled" validate:"required"`
}

func (h *handlers) updateRule(c *gin.Context) {
	var in rulePatch
	if err := bind(c, &in); err != nil {
		fail(c, err)
		return
	}
	r, err := h.store.SetRuleEnabled(c.Request.Context(), orgID(c), c.Param("id"), *in.Enabled)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewRule(r))
}

func (h *handlers) deleteRule(c *gin.Context) {
	if err := h.store.DeleteRule(c.Request.Context(), orgID(c), c.Param("id")); err != nil {
		fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
