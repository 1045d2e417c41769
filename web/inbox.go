package web

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/models"
)

// inboxLimit is how many requests the inbox lists; the counts cover all.
const inboxLimit = 200

// dueSoon is how close an expiry counts as urgent in the inbox's counts.
const dueSoon = 24 * time.Hour

type riskCount struct {
	Risk  string
	Count int
}

type inboxPage struct {
	Items []models.Approval
	// Total counts every request waiting, listed or not.
	Total int
	// ByRisk counts them by risk, most severe first, risks with none
	// left out.
	ByRisk  []riskCount
	DueSoon int
}

// inbox lists the requests waiting on the signed-in person, most urgent
// first: the earliest expiry, then the highest risk.
func (p *Pages) inbox(c *gin.Context) {
	person := CurrentPerson(c)
	in, err := p.approvals.Inbox(c.Request.Context(), person, time.Now().Add(dueSoon), inboxLimit)
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := inboxPage{Items: in.Items, Total: in.Total, DueSoon: in.DueBefore}
	for _, r := range []string{models.RiskCritical, models.RiskHigh, models.RiskMedium, models.RiskLow} {
		if n := in.ByRisk[r]; n > 0 {
			page.ByRisk = append(page.ByRisk, riskCount{r, n})
		}
	}
	p.Render(c, http.StatusOK, "inbox", page)
}
