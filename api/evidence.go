package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/scopes"
)

// evidenceScopes are what an export needs: it shows every kind of record.
var evidenceScopes = []string{scopes.ReportsRead, scopes.ApprovalsRead, scopes.ReviewsRead, scopes.CollectionsRead}

// requireEvidence admits a key holding every evidence scope (403 naming
// those missing) and, of people, owners and administrators: an export is
// the organisation's audit record.
func requireEvidence(c *gin.Context) {
	p := Principal(c)
	var missing []string
	for _, s := range evidenceScopes {
		if !p.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		Fail(c, apperr.New(apperr.InsufficientScope, "an evidence export needs the scopes %s; this key lacks %s",
			strings.Join(evidenceScopes, ", "), strings.Join(missing, ", ")))
		return
	}
	if p.IsPerson && !p.Administrator {
		Fail(c, apperr.New(apperr.Forbidden, "only the organisation's owners and administrators export evidence"))
		return
	}
	c.Next()
}

func (h *handlers) flowEvidence(c *gin.Context) {
	x, err := h.evidence.Flow(c.Request.Context(), OrgID(c), c.Param("id"))
	h.respondEvidence(c, x, err)
}

func (h *handlers) reportEvidence(c *gin.Context) {
	x, err := h.evidence.Report(c.Request.Context(), OrgID(c), c.Param("idOrSlug"))
	h.respondEvidence(c, x, err)
}

// respondEvidence writes the export as JSON, or with ?format=csv its
// timeline alone.
func (h *handlers) respondEvidence(c *gin.Context, x *evidence.Export, err error) {
	if err != nil {
		Fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	switch c.DefaultQuery("format", "json") {
	case "json":
		c.JSON(http.StatusOK, x)
	case "csv":
		c.Header("Content-Type", "text/csv; charset=utf-8")
		c.Header("Content-Disposition", `attachment; filename="evidence-`+x.Subject.ID+`.csv"`)
		c.Status(http.StatusOK)
		if err := evidence.WriteCSV(c.Writer, x.Timeline); err != nil {
			_ = c.Error(err)
		}
	default:
		Fail(c, apperr.Field(apperr.InvalidRequest, "format", "format must be json or csv"))
	}
}
