package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/models"
)

// inboxLimit bounds how many pending requests the inbox reads: it sorts
// them by urgency in memory, and a person with more than this has a
// backlog no page will fix.
const inboxLimit = 1000

// dueSoon is how close an expiry counts as urgent in the inbox's counts.
const dueSoon = 24 * time.Hour

// riskRank orders risks from least to most severe.
var riskRank = map[string]int{models.RiskLow: 1, models.RiskMedium: 2, models.RiskHigh: 3, models.RiskCritical: 4}

type riskCount struct {
	Risk  string
	Count int
}

type inboxPage struct {
	Items []models.Approval
	// ByRisk counts the items by risk, most severe first, risks with none
	// left out.
	ByRisk  []riskCount
	DueSoon int
	// Truncated says more requests are pending than the inbox shows.
	Truncated bool
}

// inbox lists the requests waiting on the signed-in person, most urgent
// first: the earliest expiry, then the highest risk.
func (p *Pages) inbox(c *gin.Context) {
	person := CurrentPerson(c)
	f := models.ApprovalFilter{Status: models.ApprovalPending, ApproverID: person.ID()}
	var page inboxPage
	cursor := ""
	for {
		rows, next, err := p.store.ListApprovals(c.Request.Context(), person.Organization.ID, f, models.Page{Limit: 200, Cursor: cursor})
		if err != nil {
			p.Fail(c, err)
			return
		}
		page.Items = append(page.Items, rows...)
		if next == "" {
			break
		}
		if len(page.Items) >= inboxLimit {
			page.Truncated = true
			break
		}
		cursor = next
	}
	slices.SortStableFunc(page.Items, func(a, b models.Approval) int {
		if d := a.ExpiresAt.Compare(b.ExpiresAt); d != 0 {
			return d
		}
		return riskRank[b.Risk] - riskRank[a.Risk]
	})
	counts := map[string]int{}
	soon := time.Now().Add(dueSoon)
	for _, a := range page.Items {
		counts[a.Risk]++
		if a.ExpiresAt.Before(soon) {
			page.DueSoon++
		}
	}
	for _, r := range []string{models.RiskCritical, models.RiskHigh, models.RiskMedium, models.RiskLow} {
		if counts[r] > 0 {
			page.ByRisk = append(page.ByRisk, riskCount{r, counts[r]})
		}
	}
	p.Render(c, http.StatusOK, "inbox", page)
}
