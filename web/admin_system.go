package web

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
)

// systemPage is the operator's view of what waits: requests by kind and
// age, the oldest with their workflows, deliveries failing, endpoints
// switched off, held versions and the outbox's lag.
type systemPage struct {
	adminBase
	*admin.System
	Oldest      []oldestRequest
	Failing     []endpointView
	SwitchedOff []endpointView
	Held        []reports.HeldVersion
	// Now is when the figures were read, for ages.
	Now time.Time
}

// Age is how long ago t was, coarsely.
func (p systemPage) Age(t time.Time) string { return coarse(p.Now.Sub(t)) }

// Lag is the outbox's lag.
func (p systemPage) Lag() string {
	if p.OutboxLag < time.Second {
		return "less than a second"
	}
	if p.OutboxLag < time.Minute {
		return plural(int(p.OutboxLag/time.Second), "second")
	}
	return coarse(p.OutboxLag)
}

// oldestRequest is one long-waiting request with its links.
type oldestRequest struct {
	admin.Waiting
	// Page is its page for people; Workflow its runs in the Temporal UI
	// ("" when the UI's address is not configured).
	Page, Workflow string
}

func (p *Pages) adminSystem(c *gin.Context) {
	ctx := c.Request.Context()
	sys, err := p.admin.System(ctx, orgOf(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	eps, _, err := p.webhooks.Endpoints(ctx, orgOf(c), requests.Page{Limit: 200})
	if err != nil {
		p.Fail(c, err)
		return
	}
	held, err := p.reports.Held(ctx, orgOf(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := systemPage{adminBase: base(c, "system"), System: sys, Held: held, Now: time.Now()}
	for _, r := range sys.Oldest {
		page.Oldest = append(page.Oldest, oldestRequest{Waiting: r, Page: requests.PageOf(r.Kind, r.ID),
			Workflow: p.codec.WorkflowLink(r.WorkflowID)})
	}
	for i := range eps {
		switch v := newEndpointView(&eps[i]); {
		case v.SwitchedOffAt != nil:
			page.SwitchedOff = append(page.SwitchedOff, v)
		case v.ConsecutiveFailures > 0:
			page.Failing = append(page.Failing, v)
		}
	}
	p.Render(c, http.StatusOK, "admin_system", page)
}
