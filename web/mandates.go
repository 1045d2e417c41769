package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/paths"
)

// The Mandates page, where a member sees and revokes their own standing
// mandates and an administrator the organisation's (the approve form's
// part that grants one is the approval's page's, approvals/page). Who may
// see and revoke is the gate's; the page only offers what it allows.

// mandatesPage is the Mandates page's data.
type mandatesPage struct {
	adminBase
	// All is set for an owner or administrator, who sees the
	// organisation's mandates and who granted each.
	All bool
	// MembersMayGrant is the organisation's setting, shown to those who
	// see all (administrators), who may change it here.
	MembersMayGrant bool
	// Live lists only the mandates that may still allow a request.
	Live     bool
	Mandates []mandateView
	Pager    pager
}

// mandateView is one mandate as the page shows it.
type mandateView struct {
	*gate.Mandate
	// State is its status now (gate.Mandate.Status).
	State string
	// AgentNames are its agent keys by name where known; empty for every
	// agent key.
	AgentNames []string
	Budget     string
	// Left is the budget left in the window now, while it may be used.
	Left string
	// Revocable is set while it has not ended (gate.Mandate.Ended): the
	// gate lets whoever sees it here revoke it.
	Revocable bool
}

func (p *Pages) mandates(c *gin.Context) {
	p.showMandates(c, http.StatusOK, nil)
}

// showMandates renders the signed-in person's mandates, or the
// organisation's for an administrator, with prob (a refused revocation).
func (p *Pages) showMandates(c *gin.Context, status int, prob *formProblem) {
	ctx := c.Request.Context()
	person := CurrentPerson(c)
	if person.Member == nil {
		// The gate refuses a guest too; this says it in a person's words.
		p.Fail(c, apperr.New(apperr.Forbidden, "Mandates are for the organisation's members: a guest grants none."))
		return
	}
	page := mandatesPage{adminBase: base(c, "mandates"), All: isAdmin(person), Live: c.Query("live") == "true",
		MembersMayGrant: person.Organization.MembersMayGrantMandates}
	page.Problem = prob
	rows, next, err := p.gate.Mandates(ctx, person.Actor(), gate.MandateFilter{Live: page.Live}, adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	var agents []string
	for _, m := range rows {
		agents = append(agents, m.Agents...)
	}
	names, err := p.gate.AgentNames(ctx, person.Organization.ID, agents)
	if err != nil {
		p.Fail(c, err)
		return
	}
	for i := range rows {
		page.Mandates = append(page.Mandates, newMandateView(&rows[i], names))
	}
	page.Pager = newPager(c, paths.MandatesPage, next)
	p.Render(c, status, "mandates", page)
}

func newMandateView(m *gate.Mandate, names map[string]string) mandateView {
	v := mandateView{Mandate: m, State: m.Status(), Budget: budgetWords(m)}
	for _, id := range m.Agents {
		if n, ok := names[id]; ok {
			id = n + " (" + id + ")"
		}
		v.AgentNames = append(v.AgentNames, id)
	}
	v.Revocable = !m.Ended()
	if v.Revocable {
		v.Left = leftWords(m)
	}
	return v
}

// windowWords say a budget window: the rolling hour, day or week, or the
// mandate's whole life.
var windowWords = map[string]string{gate.WindowHour: "in any hour", gate.WindowDay: "in any 24 hours",
	gate.WindowWeek: "in any 7 days", gate.WindowMandate: "while it holds"}

// budgetWords say a mandate's budget: "10 requests in any 24 hours".
func budgetWords(m *gate.Mandate) string {
	var parts []string
	if m.BudgetCount != nil {
		parts = append(parts, plural(*m.BudgetCount, "request"))
	}
	if m.BudgetSum != nil && m.BudgetSumField != nil {
		parts = append(parts, *m.BudgetSumField+" adding up to "+number(*m.BudgetSum))
	}
	return strings.Join(parts, " and ") + " " + windowWords[m.BudgetWindow]
}

// leftWords say what is left of a mandate's budget in the window now.
func leftWords(m *gate.Mandate) string {
	count, sum := m.Remaining(m.Usage)
	var parts []string
	if count != nil {
		parts = append(parts, plural(*count, "request"))
	}
	if sum != nil && m.BudgetSumField != nil {
		parts = append(parts, number(*sum)+" of "+*m.BudgetSumField)
	}
	return strings.Join(parts, " and ")
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// revokeMandate ends a mandate at once, through the gate, which lets its
// granter and administrators; Confirm must be ticked.
func (p *Pages) revokeMandate(c *gin.Context) {
	err := confirmed(c, "mandate")
	if err == nil {
		_, err = p.gate.Revoke(c.Request.Context(), CurrentPerson(c).Actor(), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, nil); ok {
			p.showMandates(c, status, prob)
		}
		return
	}
	Done(c, paths.Mandate(c.Param("id")), "mandate-revoked")
}

// setMandateGranting says whether every member may grant mandates, or
// only owners and administrators: the organisation's
// membersMayGrantMandates, as PATCH /api/v1/admin/organization sets it.
func (p *Pages) setMandateGranting(c *gin.Context) {
	on := c.PostForm("membersMayGrant") == "yes"
	_, err := p.admin.UpdateOrganization(c.Request.Context(), orgOf(c), admin.ByAdministrator,
		admin.OrganizationPatch{MembersMayGrantMandates: &on})
	if err != nil {
		p.Fail(c, err)
		return
	}
	notice := "mandate-granting-admins"
	if on {
		notice = "mandate-granting-members"
	}
	Done(c, paths.MandatesPage, notice)
}
