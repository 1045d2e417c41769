package page

import (
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/web"
)

// The approve form's "approve similar requests" part, which grants a
// standing mandate while deciding (gate.Service.GrantFrom). Who may grant
// is the gate's; the page only offers what it allows.

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
var mandateLabels = web.Labels{"expiresAt": "Until", "condition": "Condition", "budget": "Budget",
	"budget.count": "Requests allowed", "budget.window": "Budget window", "note": "Note for the standing approval", "agents": "Agents"}

// offerMandate is the mandate part for the signed-in person on a, or nil
// when they could not grant one with it; typed is what they sent, if
// anything.
func offerMandate(c *gin.Context, a *approvals.Approval, typed mandateForm, field string) *mandateOffer {
	if gate.GrantableFrom(web.CurrentPerson(c).Actor(), a) != nil {
		return nil
	}
	form := typed
	if form.Window == "" {
		form = mandateForm{Until: time.Now().Add(mandateDefaultLife).UTC().Format(web.FormTimeLayout),
			Condition: gate.SimilarCondition(a.Input), Count: mandateDefaultCount, Window: mandateDefaultWindow}
	}
	return &mandateOffer{Form: form, Windows: mandateWindows, Field: field}
}

// readMandateForm reads the approve form's mandate part.
func readMandateForm(c *gin.Context) mandateForm {
	return mandateForm{On: c.PostForm("mandate") == "yes", Until: c.PostForm("mandate.until"),
		Condition: web.FormText(c.PostForm("mandate.condition")), Count: c.PostForm("mandate.count"),
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
	in.ExpiresAt, err = web.FormTime("expiresAt", f.Until)
	return in, err
}

// grantAndApprove approves a with d (decide) and grants the mandate the
// form's part describes, through the gate: a refused mandate decides
// nothing and is shown on the page with what was typed.
func (p *Page) grantAndApprove(c *gin.Context, a *approvals.Approval, form typed, decide func() error) {
	in, err := form.Mandate.input()
	decided := false
	var refusedDecision error
	var m *gate.Mandate
	if err == nil {
		m, err = p.gate.GrantFrom(c.Request.Context(), web.CurrentPerson(c).Actor(), a, in, func() error {
			decided = true
			refusedDecision = decide()
			return refusedDecision
		})
	}
	switch {
	case err == nil:
		web.Done(c, paths.Mandate(m.ID), "mandate-granted")
	case decided && refusedDecision != nil:
		p.refused(c, err, form, decisionLabels(a, nil), p.showApproval)
	default:
		e, ok := apperr.As(err)
		if !ok {
			p.pages.InternalError(c, err)
			return
		}
		field := "mandate"
		if e.Field != "" {
			field += "." + e.Field
		}
		p.showApproval(c, e.Status(), formProblem{Field: field, Message: web.PersonMessage(e, mandateLabels)}, form)
	}
}
