package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/paths"
)

// Standing mandates on the pages: the approve form's "approve similar
// requests" part, which grants one while deciding (gate.Service.GrantFrom),
// and the Mandates page, where a member sees and revokes their own and an
// administrator the organisation's. Who may grant, see and revoke is the
// gate's; the pages only offer what it allows.

// mandateWindows are the budget windows, as the pages name them.
var mandateWindows = []option{
	{Value: gate.WindowHour, Label: "hour"}, {Value: gate.WindowDay, Label: "day"},
	{Value: gate.WindowWeek, Label: "week"}, {Value: gate.WindowMandate, Label: "the whole mandate"},
}

// option is one choice of a select.
type option struct{ Value, Label string }

// mandateDefaults are what the approve form offers before the person
// changes anything: a week, ten requests a day.
const (
	mandateDefaultLife   = 7 * 24 * time.Hour
	mandateDefaultCount  = "10"
	mandateDefaultWindow = "day"
)

// mandateForm is the approve form's mandate part as typed (times as the
// datetime-local field sends them, in UTC), kept when it is refused.
type mandateForm struct {
	On                                    bool
	Until, Condition, Count, Window, Note string
}

// mandateOffer is the mandate part of an approval page's approve form,
// shown when the person could grant one with this approval
// (gate.GrantableFrom).
type mandateOffer struct {
	Form    mandateForm
	Windows []option
	// Field is the form field a refusal is about ("mandate.condition").
	Field string
}

// Invalid reports whether a refusal is about the part's field name.
func (o *mandateOffer) Invalid(name string) bool { return o.Field == "mandate."+name }

// mandateLabels name the part's fields, keyed by the fields the gate's
// refusals carry.
var mandateLabels = Labels{"expiresAt": "Until", "condition": "Condition", "budget": "Budget",
	"budget.count": "Requests allowed", "budget.window": "Budget window", "note": "Note for the standing approval", "agents": "Agents"}

// offerMandate is the mandate part for the signed-in person on a, or nil
// when they could not grant one with it; typed is what they sent, if
// anything.
func offerMandate(c *gin.Context, a *approvals.Approval, typed mandateForm, field string) *mandateOffer {
	if gate.GrantableFrom(CurrentPerson(c).Actor(), a) != nil {
		return nil
	}
	form := typed
	if form.Window == "" {
		form = mandateForm{Until: time.Now().Add(mandateDefaultLife).UTC().Format(formTimeLayout),
			Condition: gate.SimilarCondition(a.Input), Count: mandateDefaultCount, Window: mandateDefaultWindow}
	}
	return &mandateOffer{Form: form, Windows: mandateWindows, Field: field}
}

// readMandateForm reads the approve form's mandate part.
func readMandateForm(c *gin.Context) mandateForm {
	return mandateForm{On: c.PostForm("mandate") == "yes", Until: c.PostForm("mandate.until"),
		Condition: FormText(c.PostForm("mandate.condition")), Count: c.PostForm("mandate.count"),
		Window: c.PostForm("mandate.window"), Note: c.PostForm("mandate.note")}
}

// input is the mandate as the gate takes it: for the approval's action
// and agent (GrantFrom fills them in), from now.
func (f mandateForm) input() (gate.GrantInput, error) {
	in := gate.GrantInput{Condition: f.Condition, Note: f.Note, Budget: &gate.Budget{Window: f.Window}}
	if s := strings.TrimSpace(f.Count); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return in, apperr.Field(apperr.InvalidRequest, "budget.count", "budget.count must be a whole number, such as 10")
		}
		in.Budget.Count = &n
	}
	var err error
	in.ExpiresAt, err = formTime("expiresAt", f.Until)
	return in, err
}

// grantAndApprove approves a with d (decide) and grants the mandate the
// form's part describes, through the gate: a refused mandate decides
// nothing and is shown on the page with what was typed.
func (p *Pages) grantAndApprove(c *gin.Context, a *approvals.Approval, form typed, decide func() error) {
	in, err := form.Mandate.input()
	decided := false
	var refusedDecision error
	var m *gate.Mandate
	if err == nil {
		m, err = p.gate.GrantFrom(c.Request.Context(), CurrentPerson(c).Actor(), a, in, func() error {
			decided = true
			refusedDecision = decide()
			return refusedDecision
		})
	}
	switch {
	case err == nil:
		done(c, paths.Mandate(m.ID), "mandate-granted")
	case decided && refusedDecision != nil:
		p.refused(c, err, form, decisionLabels(a, nil), p.showApproval)
	default:
		e, ok := apperr.As(err)
		if !ok {
			p.InternalError(c, err)
			return
		}
		field := "mandate"
		if e.Field != "" {
			field += "." + e.Field
		}
		p.showApproval(c, e.Status(), formProblem{Field: field, Message: PersonMessage(e, mandateLabels)}, form)
	}
}

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
	done(c, paths.Mandate(c.Param("id")), "mandate-revoked")
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
	done(c, paths.MandatesPage, notice)
}
