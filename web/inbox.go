package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/requests"
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
	// Sections are the kinds' parts, in the order the kinds are listed.
	Sections []InboxSection
	// Total counts every request waiting, listed or not.
	Total int
	// ByRisk counts them by risk, most severe first, risks with none
	// left out.
	ByRisk  []riskCount
	DueSoon int
	// Newest is set when the lists are newest first, else what needs
	// attention comes first.
	Newest bool
	// PushKey is the VAPID public key browsers subscribe with ("Notify
	// me"); empty hides the offer.
	PushKey string
}

// inbox lists the requests waiting on the signed-in person, what needs
// attention first (the highest risk, then the earliest expiry), or with
// ?order=newest the newest first: each kind's section, then the counts of
// them all.
func (p *Pages) inbox(c *gin.Context) {
	person := CurrentPerson(c)
	soon := time.Now().Add(dueSoon)
	order, err := requests.InboxOrderOf(c.Query("order"), requests.Attention)
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := inboxPage{Newest: order == requests.Newest}
	byRisk := map[string]int{}
	for _, k := range p.kinds {
		section, err := k.Inbox(c.Request.Context(), person.Actor(), order, soon, inboxLimit)
		if err != nil {
			p.Fail(c, err)
			return
		}
		page.Sections = append(page.Sections, section)
		page.Total += section.Total
		page.DueSoon += section.DueBefore
		for r, n := range section.ByRisk {
			byRisk[r] += n
		}
	}
	for _, r := range []string{requests.RiskCritical, requests.RiskHigh, requests.RiskMedium, requests.RiskLow} {
		if n := byRisk[r]; n > 0 {
			page.ByRisk = append(page.ByRisk, riskCount{r, n})
		}
	}
	if page.PushKey, err = p.push.PublicKey(c.Request.Context()); err != nil {
		// The inbox matters more than the offer of notifications.
		p.log.ErrorContext(c.Request.Context(), "push key", "error", err)
	} else {
		c.Header("Content-Security-Policy", pagePolicy(pushScripts...))
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

// historyItem is one settled request with its page and the name of its
// kind.
type historyItem struct {
	requests.Settled
	Path string
	What string
}

// history lists the settled requests, of every kind, the signed-in person
// was asked or made, the most recently settled first, filtered by outcome
// and role.
func (p *Pages) history(c *gin.Context) {
	f := requests.HistoryFilter{Status: c.Query("status"), Role: c.Query("role")}
	items, next, err := p.settled.For(c.Request.Context(), currentActor(c), f,
		requests.Page{Limit: historyLimit, Cursor: c.Query("cursor")})
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := historyPage{Statuses: states.Settled, Status: f.Status, Role: f.Role}
	for _, s := range items {
		noun := requests.NounOf(s.Kind)
		item := historyItem{Settled: s, Path: requests.PageOf(s.Kind, s.ID), What: strings.ToUpper(noun[:1]) + noun[1:]}
		page.Items = append(page.Items, item)
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
