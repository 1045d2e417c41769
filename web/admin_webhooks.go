package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/webhooks"
	"github.com/assent-hq/assent/wire"
)

// endpointView is a webhook endpoint as the pages show it.
type endpointView struct {
	*webhooks.Endpoint
	// Address is the URL as the API shows it: a Slack or Teams address is
	// itself a credential, so only its host.
	Address string
}

func newEndpointView(ep *webhooks.Endpoint) endpointView {
	return endpointView{Endpoint: ep, Address: wire.NewWebhookEndpoint(ep).URL}
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
	// Form is the new-endpoint form; webhookChoices what it offers.
	Form webhookForm
	webhookChoices
}

// Editing tells the settings form it adds an endpoint.
func (webhooksPage) Editing() bool { return false }

// webhookForm is what was typed into an endpoint's settings form.
type webhookForm struct {
	URL    string
	Format string
	Events []string
}

// Has reports whether the form had event kind ticked.
func (f webhookForm) Has(kind string) bool { return slices.Contains(f.Events, kind) }

// webhookChoices are the formats and event kinds an endpoint can have.
type webhookChoices struct {
	Formats []formatChoice
	Kinds   []string
}

// NotYet reports whether nothing sends kind yet: the picker says so, and
// offers it only to keep an existing subscription (the API accepts it).
func (webhookChoices) NotYet(kind string) bool { return !events.IsEmitted(kind) }

type formatChoice struct{ Value, Label string }

var endpointChoices = webhookChoices{
	Formats: []formatChoice{
		{webhooks.FormatJSON, "Signed JSON"},
		{webhooks.FormatSlack, "Slack incoming webhook"},
		{webhooks.FormatTeams, "Microsoft Teams workflow"},
	},
	Kinds: events.WebhookKinds(),
}

// readWebhookForm reads an endpoint's settings form. No event ticked means
// every event, including ones added later; an empty address on an existing
// endpoint keeps the one it has (the page cannot show a Slack or Teams
// address, which is a credential).
func readWebhookForm(c *gin.Context) (webhookForm, webhooks.Settings) {
	f := webhookForm{URL: strings.TrimSpace(c.PostForm("url")), Format: c.PostForm("format"), Events: c.PostFormArray("events")}
	in := webhooks.Settings{Format: &f.Format, Events: &f.Events}
	if f.URL != "" {
		in.URL = &f.URL
	}
	return f, in
}

// webhookLabels name the endpoint forms' fields as the pages label them.
var webhookLabels = Labels{"url": "Address", "format": "Format", "events": "Events", "since": "Since"}

func (p *Pages) adminWebhooks(c *gin.Context) {
	p.showWebhooks(c, http.StatusOK, nil, webhookForm{Format: webhooks.FormatJSON})
}

func (p *Pages) showWebhooks(c *gin.Context, status int, prob *formProblem, form webhookForm) {
	rows, next, err := p.webhooks.Endpoints(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := webhooksPage{adminBase: base(c, "webhooks"), Pager: newPager(c, "/admin/webhooks", next),
		SwitchOffAfter: webhooks.SwitchOffAfter, Form: form, webhookChoices: endpointChoices}
	page.Problem = prob
	for i := range rows {
		page.Endpoints = append(page.Endpoints, newEndpointView(&rows[i]))
	}
	p.Render(c, status, "admin_webhooks", page)
}

// createWebhook adds an endpoint through the same checks as the API. Its
// answer is the endpoint's page showing the signing secret, the one time
// the page shows it.
func (p *Pages) createWebhook(c *gin.Context) {
	form, in := readWebhookForm(c)
	err := validate.Struct(&in)
	var ep *webhooks.Endpoint
	if err == nil {
		ep, err = p.webhooks.Create(c.Request.Context(), orgOf(c), in)
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, webhookLabels); ok {
			p.showWebhooks(c, status, prob, form)
		}
		return
	}
	p.showWebhook(c, ep.ID, http.StatusCreated, webhookPage{Secret: &shownSecret{Value: ep.Secret}})
}

type webhookPage struct {
	adminBase
	E          endpointView
	Deliveries []deliveryView
	Pager      pager
	// Status filters the log; Statuses are the choices.
	Status   string
	Statuses []string
	// Since is what the recover form holds.
	Since          string
	SwitchOffAfter int
	// Secret is a signing secret just made, shown this once.
	Secret *shownSecret
	// Test is what the receiver answered to Send test.
	Test *webhooks.TestResult
	// Form is the settings form; webhookChoices what it offers.
	Form webhookForm
	webhookChoices
}

// Editing tells the settings form it changes an endpoint.
func (webhookPage) Editing() bool { return true }

// shownSecret is a signing secret on the one page that shows it. After a
// rotation, the previous secret signs beside it until PreviousUntil.
type shownSecret struct {
	Value         string
	PreviousUntil *time.Time
}

func (p *Pages) adminWebhook(c *gin.Context) {
	p.showWebhook(c, c.Param("id"), http.StatusOK, webhookPage{})
}

// showWebhook renders endpoint id with its delivery log and settings form.
// seed carries what an action adds: a refused action's problem, what the
// forms held, a secret to show once, a test's result.
func (p *Pages) showWebhook(c *gin.Context, id string, status int, seed webhookPage) {
	ctx, org := c.Request.Context(), orgOf(c)
	ep, err := p.webhooks.Endpoint(ctx, org, id)
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := seed
	page.adminBase = base(c, "webhooks")
	page.Problem = seed.Problem
	page.E, page.Statuses, page.SwitchOffAfter, page.webhookChoices = newEndpointView(ep), webhooks.DeliveryStatuses, webhooks.SwitchOffAfter, endpointChoices
	if page.Since == "" {
		page.Since = time.Now().UTC().Add(-24 * time.Hour).Format(FormTimeLayout)
	}
	if page.Form.Format == "" {
		page.Form = webhookForm{Format: ep.Format, Events: ep.Events}
	}
	if c.Request.Method == http.MethodGet {
		page.Status = c.Query("status")
		if page.Notice != "" && c.Query("done") == "recovered" {
			n, _ := strconv.Atoi(c.Query("n"))
			page.Notice = fmt.Sprintf("Queued %d failed or skipped %s to be sent again.", n, deliveries(n))
		}
	}
	rows, next, err := p.webhooks.Deliveries(ctx, org, webhooks.DeliveryFilter{EndpointID: ep.ID, Status: page.Status}, adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	for _, d := range rows {
		page.Deliveries = append(page.Deliveries, newDeliveryView(d))
	}
	page.Pager = newPager(c, "/admin/webhooks/"+ep.ID, next)
	p.Render(c, status, "admin_webhook", page)
}

// deliveryView is a delivery in the log, its attempts grouped by send: a
// resend shows its own state and attempts apart from the sends before.
type deliveryView struct {
	webhooks.DeliveryLog
	SendList []sendView
}

// sendView is one send of a delivery: N is 0 for the first, n for the nth
// time it was sent again.
type sendView struct {
	N        int
	State    string
	Attempts []webhooks.DeliveryAttempt
}

func newDeliveryView(d webhooks.DeliveryLog) deliveryView {
	v := deliveryView{DeliveryLog: d, SendList: make([]sendView, d.Sends+1)}
	for n := range v.SendList {
		v.SendList[n].N = n
	}
	for _, a := range d.AttemptList {
		if a.Send >= 0 && a.Send <= d.Sends {
			v.SendList[a.Send].Attempts = append(v.SendList[a.Send].Attempts, a)
		}
	}
	// The delivery's status is its latest send's; an earlier send ended as
	// its last attempt did, or skipped if it made none.
	for n := range v.SendList {
		s := &v.SendList[n]
		switch {
		case n == d.Sends:
			s.State = d.Status
		case len(s.Attempts) == 0:
			s.State = webhooks.DeliverySkipped
		case s.Attempts[len(s.Attempts)-1].Error == "":
			s.State = webhooks.DeliveryDelivered
		default:
			s.State = webhooks.DeliveryFailed
		}
	}
	return v
}

func deliveries(n int) string {
	if n == 1 {
		return "delivery"
	}
	return "deliveries"
}

// webhookRefused shows endpoint id again with why the action was refused
// and what its form held.
func (p *Pages) webhookRefused(c *gin.Context, id string, err error, seed webhookPage) {
	if prob, status, ok := p.refusedBy(c, err, webhookLabels); ok {
		seed.Problem = prob
		p.showWebhook(c, id, status, seed)
	}
}

// updateWebhook saves the settings form: address, format and events.
func (p *Pages) updateWebhook(c *gin.Context) {
	id := c.Param("id")
	form, in := readWebhookForm(c)
	err := validate.Struct(&in)
	if err == nil {
		_, err = p.webhooks.Update(c.Request.Context(), orgOf(c), id, in)
	}
	if err != nil {
		p.webhookRefused(c, id, err, webhookPage{Form: form})
		return
	}
	Done(c, "/admin/webhooks/"+id, "webhook-updated")
}

// rotateWebhookSecret makes a new signing secret and shows it once; the
// old one keeps signing beside it for webhooks.RotationOverlap.
func (p *Pages) rotateWebhookSecret(c *gin.Context) {
	id := c.Param("id")
	ep, err := p.webhooks.RotateSecret(c.Request.Context(), orgOf(c), id)
	if err != nil {
		p.webhookRefused(c, id, err, webhookPage{})
		return
	}
	p.showWebhook(c, id, http.StatusOK, webhookPage{Secret: &shownSecret{Value: ep.Secret, PreviousUntil: ep.PreviousSecretUntil}})
}

// sendTestWebhook posts a test event now and shows what the receiver
// answered; like the API's, it is not retried, logged or counted.
func (p *Pages) sendTestWebhook(c *gin.Context) {
	id := c.Param("id")
	res, err := p.webhooks.SendTest(c.Request.Context(), orgOf(c), id)
	if err != nil {
		p.webhookRefused(c, id, err, webhookPage{})
		return
	}
	p.showWebhook(c, id, http.StatusOK, webhookPage{Test: &res})
}

// setWebhookEnabled switches an endpoint on or off
// (webhooks.Service.SetEnabled).
func (p *Pages) setWebhookEnabled(c *gin.Context) {
	id := c.Param("id")
	enabled, err := formBool(c, "enabled")
	if err == nil {
		_, err = p.webhooks.SetEnabled(c.Request.Context(), orgOf(c), id, enabled)
	}
	if err != nil {
		p.webhookRefused(c, id, err, webhookPage{})
		return
	}
	if enabled {
		Done(c, "/admin/webhooks/"+id, "webhook-enabled")
		return
	}
	Done(c, "/admin/webhooks/"+id, "webhook-disabled")
}

// recoverDeliveries queues again every failed or skipped delivery to the
// endpoint since the time given, such as the start of an outage.
func (p *Pages) recoverDeliveries(c *gin.Context) {
	id, typed := c.Param("id"), c.PostForm("since")
	since, err := parseSince(typed)
	var n int64
	if err == nil {
		n, err = p.webhooks.Recover(c.Request.Context(), orgOf(c), id, since)
	}
	if err != nil {
		p.webhookRefused(c, id, err, webhookPage{Since: typed})
		return
	}
	Done(c, "/admin/webhooks/"+id+"?n="+strconv.FormatInt(n, 10), "recovered")
}

// parseSince reads the recover form's time, in UTC: the datetime-local
// field's form, with or without seconds, or RFC 3339.
func parseSince(s string) (time.Time, error) { return parseFormTime("since", s) }

func (p *Pages) deleteWebhook(c *gin.Context) {
	err := confirmed(c, "Delete endpoint button")
	if err == nil {
		err = p.webhooks.Delete(c.Request.Context(), orgOf(c), c.Param("id"))
	}
	if err != nil {
		p.webhookRefused(c, c.Param("id"), err, webhookPage{})
		return
	}
	Done(c, "/admin/webhooks", "webhook-deleted")
}

// resendDelivery sends a settled delivery again under its own id and goes
// back to its endpoint's page.
func (p *Pages) resendDelivery(c *gin.Context) {
	ctx, org := c.Request.Context(), orgOf(c)
	d, err := p.webhooks.Delivery(ctx, org, c.Param("id"))
	if err != nil {
		p.Fail(c, err)
		return
	}
	back := "/admin/webhooks"
	if d.EndpointID != nil {
		back += "/" + *d.EndpointID
	}
	if _, err := p.webhooks.Resend(ctx, org, d.ID); err != nil {
		// Refused on the endpoint's page, unless it is gone (or this is a
		// callback): then on the error page.
		if d.EndpointID != nil {
			if _, gone := p.webhooks.Endpoint(ctx, org, *d.EndpointID); gone == nil {
				p.webhookRefused(c, *d.EndpointID, err, webhookPage{})
				return
			}
		}
		p.Fail(c, err)
		return
	}
	Done(c, back, "delivery-resent")
}
