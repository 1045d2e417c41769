package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/requests"
)

// The admin pages: the organisation's owners and administrators manage
// members, teams, guests, agent keys, webhook endpoints and rules. Every
// query takes the signed-in person's organisation id, so another
// organisation's record is simply not found. Every change is a POST
// answered with a 303 back to the page it came from, except those whose
// answer shows something once: a new key or signing secret, or what a
// webhook test got back.

// adminPageSize is how many rows an admin list shows per page.
const adminPageSize = 50

// adminParts holds what every admin page shares: the section navigation,
// the notice and problem boxes and the pager.
const adminParts = "templates/admin_parts.html"

// mountAdmin adds the admin pages for owners and administrators.
func (p *Pages) mountAdmin(g *gin.RouterGroup) {
	p.parseAdminPages()
	a := g.Group("/admin", RequireSignIn, p.requireAdmin)
	a.GET("", p.adminOverview)

	a.GET("/members", p.adminMembers)
	a.POST("/members", p.addMember)
	a.POST("/members/:id/role", p.changeRole)
	a.POST("/members/:id/active", p.setMemberActive)
	a.GET("/teams", p.adminTeams)
	a.POST("/teams", p.createTeam)
	a.POST("/teams/:id", p.updateTeam)
	a.POST("/teams/:id/remove", p.removeTeam)
	a.GET("/guests", p.adminGuests)
	a.POST("/guests", p.admitGuest)
	a.POST("/guests/:id", p.updateGuest)
	a.POST("/guests/:id/remove", p.removeGuest)

	a.GET("/keys", p.adminKeys)
	a.POST("/keys", p.createKey)
	a.POST("/keys/:id/revoke", p.revokeKey)

	a.GET("/webhooks", p.adminWebhooks)
	a.POST("/webhooks", p.createWebhook)
	a.GET("/webhooks/:id", p.adminWebhook)
	a.POST("/webhooks/:id", p.updateWebhook)
	a.POST("/webhooks/:id/test", p.sendTestWebhook)
	a.POST("/webhooks/:id/rotate-secret", p.rotateWebhookSecret)
	a.POST("/webhooks/:id/enabled", p.setWebhookEnabled)
	a.POST("/webhooks/:id/recover", p.recoverDeliveries)
	a.POST("/webhooks/:id/delete", p.deleteWebhook)
	a.POST("/deliveries/:id/resend", p.resendDelivery)

	a.GET("/rules", p.adminRules)
	a.POST("/rules", p.createRule)
	a.POST("/rules/:id/enabled", p.setRuleEnabled)
	a.POST("/rules/:id/delete", p.deleteRule)
	a.GET("/actions", p.adminActions)
	a.POST("/actions", p.saveAction)
	a.POST("/actions/:id/delete", p.deleteAction)

	a.GET("/slack", p.adminSlack)
	a.POST("/slack", p.saveSlack)
	a.POST("/slack/disconnect", p.disconnectSlack)

	a.GET("/model-screen", p.adminScreen)
	a.POST("/model-screen", p.saveScreen)
	a.POST("/model-screen/off", p.screenOff)

	a.POST("/mandate-granting", p.setMandateGranting)

	a.GET("/held-versions", p.adminHeld)
	a.GET("/system", p.adminSystem)
	a.POST("/held-versions/:id/release", p.releaseHeld)
	a.POST("/held-versions/:id/decline", p.declineHeld)
}

// adminPartsPages are the pages besides the admin pages that use their
// parts (the messages, the pager, the confirmed form).
var adminPartsPages = map[string]bool{"mandates": true, "settings": true}

// parseAdminPages parses each admin page with the parts they share; New
// parsed them with the layout alone.
func (p *Pages) parseAdminPages() {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html"))
	for name := range p.pages {
		if name == "admin_parts" || (name != "admin" && !strings.HasPrefix(name, "admin_") && !adminPartsPages[name]) {
			continue
		}
		p.pages[name] = template.Must(template.Must(layout.Clone()).ParseFS(files, adminParts, "templates/"+name+".html"))
	}
	delete(p.pages, "admin_parts")
}

// isAdmin reports whether the person may use the admin pages: an active
// member who is an owner or an administrator. Guests never may.
func isAdmin(person *accounts.Person) bool {
	return person != nil && person.Member != nil &&
		person.Member.Administers()
}

// requireAdmin refuses everyone but owners and administrators with 403.
func (p *Pages) requireAdmin(c *gin.Context) {
	if !isAdmin(CurrentPerson(c)) {
		p.Fail(c, apperr.New(apperr.Forbidden, "Only the organisation's owners and administrators can use the admin pages."))
		return
	}
	c.Next()
}

// orgOf is the signed-in person's organisation id, which scopes every
// admin query.
func orgOf(c *gin.Context) string { return CurrentPerson(c).Organization.ID }

// adminBase is what every admin page shows besides its own content.
type adminBase struct {
	// Section names the page in the section navigation.
	Section string
	// Notice says what the last action did, from a fixed list.
	Notice string
	// Problem is why the last action was refused.
	Problem *formProblem
}

// formProblem is a refused action: the message and the field it is about.
type formProblem struct {
	Field   string
	Message string
}

// Invalid reports whether the problem is about the named form field, so
// the template can mark the field.
func (b adminBase) Invalid(field string) bool { return b.Problem != nil && b.Problem.Field == field }

// InvalidIn is Invalid for a list field: the refusal names it or one of
// its elements (policy[2].condition).
func (b adminBase) InvalidIn(field string) bool {
	return b.Invalid(field) || b.Problem != nil && strings.HasPrefix(b.Problem.Field, field+"[")
}

// notices are what a redirect after an action may say; the query names
// one, so a link cannot put words on the page.
var notices = map[string]string{
	"member-added":       "The member was added.",
	"role-changed":       "The role was changed.",
	"member-deactivated": "The member was deactivated; their sessions and tokens no longer work.",
	"member-reactivated": "The member was reactivated.",
	"team-created":       "The team was created.",
	"team-updated":       "The team was saved. Requests already made keep the people they were sent to.",
	"team-removed":       "The team was removed. Requests already made keep the people they were sent to.",
	"guest-admitted":     "The guest was admitted. They sign in with their email address.",
	"guest-existed":      "That address was already admitted as a guest.",
	"guest-updated":      "The guest was saved. Requests already made keep them as they were asked.",
	"guest-removed":      "The guest was removed: they are signed out, their emailed links no longer work and they were taken off pending requests. A request left with nobody to decide it now goes to the owners and administrators.",
	"key-revoked":        "The key was revoked; requests signed with it now fail.",
	"webhook-updated":    "The endpoint's settings were saved.",
	"webhook-enabled":    "The endpoint is on again, with its failure count reset.",
	"webhook-disabled":   "The endpoint is disabled; new events are not sent to it.",
	"webhook-deleted":    "The endpoint was deleted; its delivery log is kept.",
	"delivery-resent":    "The delivery was queued to be sent again under the same delivery id.",
	"recovered":          "The failed and skipped deliveries since that time were queued to be sent again.", // the page adds the count
	"rule-created":       "The rule was created and applies to new requests.",
	"rule-enabled":       "The rule is enabled and applies to new requests.",
	"rule-disabled":      "The rule is disabled; requests already created keep what it gave them.",
	"rule-deleted":       "The rule was deleted.",
	"action-saved":       "The action was saved; checks from now on follow it.",
	"action-deleted":     "The action was deleted; agents asking the gate for it are told it is not registered.",
	"slack-saved":        "Saved. Secrets are kept sealed and never shown again.",
	"slack-disconnected": "Slack was disconnected: messages keep their link only.",
	"screen-saved":       "Saved: new approvals are screened before anyone is asked. The key is kept sealed and never shown again.",
	"screen-off":         "The model screen is off; its key was deleted. Approvals already screened keep their concerns.",
	"version-released":   "The version was released: it is live unless a newer version is.",
	"version-declined":   "The version was declined; it keeps its number and is never served.",
	"delegation-set":     "Your delegation is set. While it holds, requests that would ask you ask who stands in for you.",
	"delegation-ended":   "Your delegation has ended: new requests ask you again.",
	"token-revoked":      "The token was revoked; requests signed with it now fail.",
	"mandate-granted":    "You approved the request and granted the standing approval below: similar requests are allowed without asking you, within its budget, until it expires or is revoked.",
	"mandate-revoked":    "The standing approval was revoked: the next request it would have allowed asks a person.",
	// Who may grant standing approvals, set on the Mandates page.
	"mandate-granting-members": "Every member may now grant standing approvals, within what they could approve themselves.",
	"mandate-granting-admins":  "Only owners and administrators may now grant standing approvals; those members granted allow nothing while this holds.",
}

// base is the page's shared data: its section and the notice the query
// names.
func base(c *gin.Context, section string) adminBase {
	return adminBase{Section: section, Notice: notices[c.Query("done")]}
}

// Done redirects to path after an action, naming the notice to show; a
// fragment (a row's anchor) stays last.
func Done(c *gin.Context, path, notice string) {
	path, fragment, cut := strings.Cut(path, "#")
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	path += sep + "done=" + url.QueryEscape(notice)
	if cut {
		path += "#" + fragment
	}
	c.Redirect(http.StatusSeeOther, path)
}

// refusedBy turns err into the problem to show on the form that caused
// it, in the words of the form's labels l, with its status. A record that is not found (another
// organisation's id) is the error page's 404, and an error that is not
// the person's to act on is a 500; ok is false for both and the response
// is written.
func (p *Pages) refusedBy(c *gin.Context, err error, l Labels) (prob *formProblem, status int, ok bool) {
	e, isApp := apperr.As(err)
	if !isApp {
		p.InternalError(c, err)
		return nil, 0, false
	}
	if e.Code == apperr.NotFound {
		p.Fail(c, err)
		return nil, 0, false
	}
	return &formProblem{Field: e.Field, Message: PersonMessage(e, l)}, e.Status(), true
}

// confirmed refuses a change that cannot be undone unless its form's
// Confirm box was ticked (the admin-confirm part); what names the row's
// kind, such as "key".
func confirmed(c *gin.Context, what string) error {
	if c.PostForm("confirm") == "yes" {
		return nil
	}
	return apperr.Field(apperr.InvalidRequest, "confirm", "tick Confirm beside the %s first", what)
}

// pager links to the newest page and the next older one; the query keeps
// its other parameters.
type pager struct {
	First, Next string
}

// adminPage reads the page the query asks for.
func adminPage(c *gin.Context) requests.Page {
	return requests.Page{Limit: adminPageSize, Cursor: c.Query("cursor")}
}

// newPager links around the current page of the list at path, given the
// list's next cursor; the links keep the query's other parameters. A page
// shown again after a refused POST has none.
func newPager(c *gin.Context, path, next string) pager {
	q := url.Values{}
	if c.Request.Method == http.MethodGet {
		q = c.Request.URL.Query()
	}
	q.Del("done")
	var out pager
	if q.Get("cursor") != "" {
		q.Del("cursor")
		out.First = path + query(q)
	}
	if next != "" {
		q.Set("cursor", next)
		out.Next = path + query(q)
	}
	return out
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// splitList reads a list typed into one field: entries separated by
// commas or new lines, blanks dropped.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// overviewPage is the admin overview's data.
type overviewPage struct {
	adminBase
	// SwitchedOff are the endpoints switched off after failing, which the
	// overview points out.
	SwitchedOff []endpointView
}

// adminOverview links to each section and points out switched-off
// webhook endpoints.
func (p *Pages) adminOverview(c *gin.Context) {
	page := overviewPage{adminBase: base(c, "overview")}
	eps, _, err := p.webhooks.Endpoints(c.Request.Context(), orgOf(c), requests.Page{Limit: 200})
	if err != nil {
		p.Fail(c, err)
		return
	}
	for i := range eps {
		if eps[i].SwitchedOffAt != nil {
			page.SwitchedOff = append(page.SwitchedOff, newEndpointView(&eps[i]))
		}
	}
	p.Render(c, http.StatusOK, "admin", page)
}
