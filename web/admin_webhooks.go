package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/wire"
	"github.com/assent-hq/assent/models"
)

// endpointView is a webhook endpoint as the pages show it.
type endpointView struct {
	*models.WebhookEndpoint
	// Address is the URL as the API shows it: a Slack or Teams address is
	// itself a credential, so only its host.
	Address string
}

func newEndpointView(ep *models.WebhookEndpoint) endpointView {
	return endpointView{WebhookEndpoint: ep, Address: wire.NewWebhookEndpoint(ep).URL}
}

// State is the endpoint's state in a word: switched off (after failing),
// disabled (by an administrator) or enabled.
func (e endpointView) State() string {
	switch {
	case e.SwitchedOffAt != nil:
		return "switched off"
	case !e.Enabled:
		return "disabled"
	}
	return "enabled"
}

// Receiving reports whether new events are sent to the endpoint.
func (e endpointView) Receiving() bool { return e.Enabled && e.SwitchedOffAt == nil }

type webhooksPage struct {
	adminBase
	Endpoints []endpointView
	Pager     pager
	// SwitchOffAfter is the failure count that switches an endpoint off.
	SwitchOffAfter int
}

func (p *Pages) adminWebhooks(c *gin.Context) {
	rows, next, err := p.store.ListWebhookEndpoints(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := webhooksPage{adminBase: base(c, "webhooks"), Pager: newPager(c, "/admin/webhooks", next), SwitchOffAfter: models.SwitchOffAfter}
	for i := range rows {
		page.Endpoints = append(page.Endpoints, newEndpointView(&rows[i]))
	}
	p.Render(c, http.StatusOK, "admin_webhooks", page)
}

type webhookPage struct {
	adminBase
	E          endpointView
	Deliveries []models.DeliveryLog
	Pager      pager
	// Status filters the log; Statuses are the choices.
	Status   string
	Statuses []string
	// Since is what the recover form holds.
	Since          string
	SwitchOffAfter int
}

// sinceLayout is how the recover form's datetime-local field sends a time.
const sinceLayout = "2006-01-02T15:04"

func (p *Pages) adminWebhook(c *gin.Context) {
	p.showWebhook(c, c.Param("id"), http.StatusOK, nil, time.Now().UTC().Add(-24*time.Hour).Format(sinceLayout))
}

// showWebhook renders endpoint id with its delivery log, prob (a refused
// action) and what the recover form held.
func (p *Pages) showWebhook(c *gin.Context, id string, status int, prob *formProblem, since string) {
	ctx, org := c.Request.Context(), orgOf(c)
	ep, err := p.store.GetWebhookEndpoint(ctx, org, id)
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := webhookPage{adminBase: base(c, "webhooks"), E: newEndpointView(ep), Statuses: models.DeliveryStatuses,
		Since: since, SwitchOffAfter: models.SwitchOffAfter}
	if c.Request.Method == http.MethodGet {
		page.Status = c.Query("status")
		if page.Notice != "" && c.Query("done") == "recovered" {
			n, _ := strconv.Atoi(c.Query("n"))
			page.Notice = fmt.Sprintf("Queued %d failed or skipped %s to be sent again.", n, deliveries(n))
		}
	}
	var next string
	page.Deliveries, next, err = p.store.ListDeliveryLog(ctx, org, models.DeliveryFilter{EndpointID: ep.ID, Status: page.Status}, adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page.Pager = newPager(c, "/admin/webhooks/"+ep.ID, next)
	page.Problem = prob
	p.Render(c, status, "admin_webhook", page)
}

func deliveries(n int) string {
	if n == 1 {
		return "delivery"
	}
	return "deliveries"
}

// webhookRefused shows endpoint id again with why the action was refused.
func (p *Pages) webhookRefused(c *gin.Context, id string, err error, since string) {
	if prob, status, ok := p.refusedBy(c, err); ok {
		p.showWebhook(c, id, status, prob, since)
	}
}

// setWebhookEnabled switches an endpoint on or off. Switching on an
// endpoint switched off after failures resets its failure count, as the
// API's update does.
func (p *Pages) setWebhookEnabled(c *gin.Context) {
	id := c.Param("id")
	enabled, err := formBool(c, "enabled")
	if err == nil {
		_, err = p.store.UpdateWebhookEndpoint(c.Request.Context(), orgOf(c), id, models.WebhookEndpointPatch{Enabled: &enabled})
	}
	if err != nil {
		p.webhookRefused(c, id, err, "")
		return
	}
	if enabled {
		done(c, "/admin/webhooks/"+id, "webhook-enabled")
		return
	}
	done(c, "/admin/webhooks/"+id, "webhook-disabled")
}

// recoverDeliveries queues again every failed or skipped delivery to the
// endpoint since the time given, such as the start of an outage.
func (p *Pages) recoverDeliveries(c *gin.Context) {
	id, typed := c.Param("id"), c.PostForm("since")
	since, err := parseSince(typed)
	var n int64
	if err == nil {
		n, err = p.store.RecoverDeliveries(c.Request.Context(), orgOf(c), id, since)
	}
	if err != nil {
		p.webhookRefused(c, id, err, typed)
		return
	}
	done(c, "/admin/webhooks/"+id+"?n="+strconv.FormatInt(n, 10), "recovered")
}

// parseSince reads the recover form's time, in UTC: the datetime-local
// field's form, with or without seconds, or RFC 3339.
func parseSince(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{sinceLayout, sinceLayout + ":05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, apperr.Field(apperr.InvalidRequest, "since", "since must be a date and time in UTC, such as 2026-01-02T15:04")
}

func (p *Pages) deleteWebhook(c *gin.Context) {
	if err := p.store.DeleteWebhookEndpoint(c.Request.Context(), orgOf(c), c.Param("id")); err != nil {
		p.webhookRefused(c, c.Param("id"), err, "")
		return
	}
	done(c, "/admin/webhooks", "webhook-deleted")
}

// resendDelivery sends a settled delivery again under its own id and goes
// back to its endpoint's page.
func (p *Pages) resendDelivery(c *gin.Context) {
	ctx, org := c.Request.Context(), orgOf(c)
	d, err := p.store.GetDelivery(ctx, org, c.Param("id"))
	if err != nil {
		p.Fail(c, err)
		return
	}
	back := "/admin/webhooks"
	if d.EndpointID != nil {
		back += "/" + *d.EndpointID
	}
	if _, err := p.store.ResendDelivery(ctx, org, d.ID); err != nil {
		// Refused on the endpoint's page, unless it is gone (or this is a
		// callback): then on the error page.
		if d.EndpointID != nil {
			if _, gone := p.store.GetWebhookEndpoint(ctx, org, *d.EndpointID); gone == nil {
				p.webhookRefused(c, *d.EndpointID, err, "")
				return
			}
		}
		p.Fail(c, err)
		return
	}
	done(c, back, "delivery-resent")
}
