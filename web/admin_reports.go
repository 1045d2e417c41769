package web

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/reports"
)

// heldPage lists the versions the publish scan held, each with its
// findings and the release and decline buttons.
type heldPage struct {
	adminBase
	Held []reports.HeldVersion
	// Submission makes each button's post idempotent: it is the Update id.
	Submission string
}

func (p *Pages) adminHeld(c *gin.Context) { p.showHeld(c, http.StatusOK, nil) }

func (p *Pages) showHeld(c *gin.Context, status int, prob *formProblem) {
	held, err := p.reports.Held(c.Request.Context(), orgOf(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := heldPage{adminBase: base(c, "held"), Held: held, Submission: ids.New("sub")}
	page.Problem = prob
	p.Render(c, status, "admin_held", page)
}

func (p *Pages) releaseHeld(c *gin.Context) { p.decideHeld(c, true) }

func (p *Pages) declineHeld(c *gin.Context) { p.decideHeld(c, false) }

// decideHeld releases or declines a held version through the same
// service call as the API.
func (p *Pages) decideHeld(c *gin.Context, release bool) {
	// One submission id serves every button of the page: the version and
	// the decision make each button's Update its own.
	sub := c.PostForm("submission")
	if sub != "" {
		sub += "-" + c.Param("id") + "-" + strconv.FormatBool(release)
	}
	_, _, err := p.reports.DecideHeld(c.Request.Context(), CurrentPerson(c).Actor(), orgOf(c), c.Param("id"), release, sub)
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, nil); ok {
			p.showHeld(c, status, prob)
		}
		return
	}
	notice := "version-declined"
	if release {
		notice = "version-released"
	}
	Done(c, "/admin/held-versions", notice)
}
