package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/states"
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
	// Collections are the requests for information waiting on the
	// person's reply, the earliest due first.
	Collections []models.Collection
	// Total counts every request waiting, listed or not.
	Total int
	// ByRisk counts them by risk, most severe first, risks with none
	// left out.
	ByRisk  []riskCount
	DueSoon int
	// More is set when approvals beyond those listed wait.
	More bool
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
	cols, err := p.collections.Waiting(c.Request.Context(), person, inboxLimit)
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := inboxPage{Items: in.Items, Collections: cols, Total: in.Total + len(cols), DueSoon: in.DueBefore, More: len(in.Items) < in.Total}
	soon := time.Now().Add(dueSoon)
	for _, col := range cols {
		if (col.DueAt != nil && col.DueAt.Before(soon)) || col.ExpiresAt.Before(soon) {
			page.DueSoon++
		}
	}
	for _, r := range []string{models.RiskCritical, models.RiskHigh, models.RiskMedium, models.RiskLow} {
		if n := in.ByRisk[r]; n > 0 {
			page.ByRisk = append(page.ByRisk, riskCount{r, n})
		}
	}
	p.Render(c, http.StatusOK, "inbox", page)
}

// historyLimit is how many settled requests one history page lists.
const historyLimit = 50

type historyPage struct {
	Items []historyItem
	// Statuses are the outcomes the filter offers.
	Statuses []string
	Status   string
	Role     string
	// Older is the link to the next page, empty on the last.
	Older string
}

type historyItem struct {
	models.Approval
	// SettledAt is when it was decided, or else when it expired or was
	// cancelled.
	SettledAt time.Time
}

// history lists the settled requests the signed-in person was asked to
// decide or made, newest first, filtered by status and role.
func (p *Pages) history(c *gin.Context) {
	f := models.HistoryFilter{Status: c.Query("status"), Role: c.Query("role")}
	items, next, err := p.approvals.History(c.Request.Context(), CurrentPerson(c), f,
		models.Page{Limit: historyLimit, Cursor: c.Query("cursor")})
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := historyPage{Statuses: states.Settled, Status: f.Status, Role: f.Role}
	for _, a := range items {
		settled := a.UpdatedAt
		if a.DecidedAt != nil {
			settled = *a.DecidedAt
		}
		page.Items = append(page.Items, historyItem{Approval: a, SettledAt: settled})
	}
	if next != "" {
		q := url.Values{"cursor": {next}}
		if f.Status != "" {
			q.Set("status", f.Status)
		}
		if f.Role != "" {
			q.Set("role", f.Role)
		}
		page.Older = "/history?" + q.Encode()
	}
	p.Render(c, http.StatusOK, "history", page)
}
