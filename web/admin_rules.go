package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
)

type rulesPage struct {
	adminBase
	Rules []admin.Rule
	Pager pager
	Form  ruleForm
	Kinds []string
}

// ruleForm is what was typed into the new-rule form. Its field names are
// the API's, so a refusal naming a field marks the right input: the
// escalation's are escalation.after and escalation.to.
type ruleForm struct {
	Name, Kind, Condition, RequiredApprovals, Principle, Concern, Fields string
	EscalationAfter, EscalationTo                                        string
}

// ruleLabels name the rule form's fields as the page labels them.
var ruleLabels = Labels{"name": "Name", "kind": "Kind", "condition": "Condition", "requiredApprovals": "Approvals needed",
	"escalation": "Escalation", "escalation.after": "Escalate after", "escalation.to": "Escalate to",
	"principle": "Principle", "concern": "Concern", "fields": "Fields to hide"}

func (p *Pages) adminRules(c *gin.Context) {
	p.showRules(c, http.StatusOK, nil, ruleForm{Kind: rules.KindApproval})
}

func (p *Pages) showRules(c *gin.Context, status int, prob *formProblem, form ruleForm) {
	rows, next, err := p.admin.ListRules(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := rulesPage{adminBase: base(c, "rules"), Rules: rows, Pager: newPager(c, "/admin/rules", next), Form: form, Kinds: rules.Kinds}
	page.Problem = prob
	p.Render(c, status, "admin_rules", page)
}

func (p *Pages) rulesRefused(c *gin.Context, err error, form ruleForm) {
	if prob, status, ok := p.refusedBy(c, err, ruleLabels); ok {
		p.showRules(c, status, prob, form)
	}
}

// createRule saves a rule through the same service call and checks as the
// API: the input's tags, then what each kind needs and a condition that
// compiles.
func (p *Pages) createRule(c *gin.Context) {
	form := ruleForm{Name: c.PostForm("name"), Kind: c.PostForm("kind"), Condition: c.PostForm("condition"),
		RequiredApprovals: strings.TrimSpace(c.PostForm("requiredApprovals")), Principle: c.PostForm("principle"),
		Concern: c.PostForm("concern"), Fields: c.PostForm("fields"),
		EscalationAfter: strings.TrimSpace(c.PostForm("escalation.after")), EscalationTo: c.PostForm("escalation.to")}
	in := admin.NewRule{Name: form.Name, Kind: form.Kind, Condition: form.Condition,
		Principle: form.Principle, Concern: form.Concern, Fields: splitList(form.Fields)}
	if to := splitList(form.EscalationTo); form.EscalationAfter != "" || len(to) > 0 {
		in.Escalation = &approvals.Escalation{After: durationField(form.EscalationAfter), To: to}
	}
	if form.RequiredApprovals != "" {
		n, err := strconv.Atoi(form.RequiredApprovals)
		if err != nil {
			p.rulesRefused(c, apperr.Field(apperr.InvalidRequest, "requiredApprovals", "requiredApprovals must be a whole number"), form)
			return
		}
		in.RequiredApprovals = n
	}
	if _, err := p.admin.CreateRule(c.Request.Context(), orgOf(c), in); err != nil {
		p.rulesRefused(c, err, form)
		return
	}
	Done(c, "/admin/rules", "rule-created")
}

func (p *Pages) setRuleEnabled(c *gin.Context) {
	enabled, err := formBool(c, "enabled")
	if err == nil {
		_, err = p.admin.SetRuleEnabled(c.Request.Context(), orgOf(c), c.Param("id"), enabled)
	}
	if err != nil {
		p.rulesRefused(c, err, ruleForm{Kind: rules.KindApproval})
		return
	}
	if enabled {
		Done(c, "/admin/rules", "rule-enabled")
		return
	}
	Done(c, "/admin/rules", "rule-disabled")
}

func (p *Pages) deleteRule(c *gin.Context) {
	err := confirmed(c, "rule")
	if err == nil {
		err = p.admin.DeleteRule(c.Request.Context(), orgOf(c), c.Param("id"))
	}
	if err != nil {
		p.rulesRefused(c, err, ruleForm{Kind: rules.KindApproval})
		return
	}
	Done(c, "/admin/rules", "rule-deleted")
}

// durationField is a duration typed into a form as the API reads it: whole
// seconds as a number, anything else ("4h", "90m") as a string; empty is
// absent.
func durationField(typed string) json.RawMessage {
	if typed == "" {
		return nil
	}
	if _, err := strconv.ParseUint(typed, 10, 63); err == nil {
		return json.RawMessage(typed)
	}
	b, _ := json.Marshal(typed) // a string always marshals
	return b
}
