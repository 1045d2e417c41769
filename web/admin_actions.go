package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
)

type actionsPage struct {
	adminBase
	Actions []gate.Action
	Pager   pager
	Form    actionForm
}

// actionForm is what was typed into the action form; its field names are
// the API's, so a refusal naming a field marks the right input. ID is set
// when an action is being changed.
type actionForm struct {
	ID, Name, Description, InputSchema, EditableFields, Policy, DecisionTokenTTLSeconds, Executors string
}

// newActionForm starts the form with a schema and policy to edit.
var newActionForm = actionForm{
	InputSchema: "{\n  \"type\": \"object\",\n  \"properties\": {},\n  \"additionalProperties\": false\n}",
	Policy:      "[]",
}

func (p *Pages) adminActions(c *gin.Context) {
	form := newActionForm
	if id := c.Query("edit"); id != "" {
		a, err := p.gate.GetAction(c.Request.Context(), orgOf(c), id)
		if err != nil {
			p.Fail(c, err)
			return
		}
		form = formOfAction(a)
	}
	p.showActions(c, http.StatusOK, nil, form)
}

// formOfAction is a saved action as the form shows it, to change it.
func formOfAction(a *gate.Action) actionForm {
	var schema bytes.Buffer
	_ = json.Indent(&schema, a.InputSchema, "", "  ")
	policy, _ := json.MarshalIndent(a.Policy.V, "", "  ")
	f := actionForm{ID: a.ID, Name: a.Name, Description: a.Description, InputSchema: schema.String(),
		EditableFields: strings.Join(a.EditableFields, ", "), Policy: string(policy), Executors: strings.Join(a.Executors, ", ")}
	if a.DecisionTokenTTLSeconds != nil {
		f.DecisionTokenTTLSeconds = strconv.Itoa(*a.DecisionTokenTTLSeconds)
	}
	return f
}

func (p *Pages) showActions(c *gin.Context, status int, prob *formProblem, form actionForm) {
	rows, next, err := p.gate.ListActions(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := actionsPage{adminBase: base(c, "actions"), Actions: rows, Pager: newPager(c, "/admin/actions", next), Form: form}
	page.Problem = prob
	p.Render(c, status, "admin_actions", page)
}

// saveAction registers an action, or changes the one the form names,
// through the same service call and checks as the API.
func (p *Pages) saveAction(c *gin.Context) {
	form := actionForm{ID: c.PostForm("id"), Name: c.PostForm("name"), Description: c.PostForm("description"),
		InputSchema: c.PostForm("inputSchema"), EditableFields: c.PostForm("editableFields"), Policy: c.PostForm("policy"),
		DecisionTokenTTLSeconds: strings.TrimSpace(c.PostForm("decisionTokenTtlSeconds")), Executors: c.PostForm("executors")}
	in, err := form.input()
	if err == nil {
		ctx, org := c.Request.Context(), CurrentPerson(c).Organization
		if form.ID == "" {
			_, err = p.gate.CreateAction(ctx, org, in)
		} else {
			_, err = p.gate.UpdateAction(ctx, org, form.ID, in)
		}
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, actionLabels); ok {
			p.showActions(c, status, prob, form)
		}
		return
	}
	Done(c, "/admin/actions", "action-saved")
}

// input reads the form as the API's body; the policy is the API's JSON.
func (f actionForm) input() (*gate.ActionInput, error) {
	in := &gate.ActionInput{Name: strings.TrimSpace(f.Name), Description: f.Description,
		InputSchema: json.RawMessage(f.InputSchema), EditableFields: splitList(f.EditableFields),
		Executors: splitList(f.Executors)}
	if strings.TrimSpace(f.InputSchema) == "" {
		in.InputSchema = nil
	}
	if strings.TrimSpace(f.Policy) != "" {
		dec := json.NewDecoder(strings.NewReader(f.Policy))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in.Policy); err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, "policy", "policy must be a JSON list of rules ({name, condition, outcome, …}): %v", err)
		}
	}
	if f.DecisionTokenTTLSeconds != "" {
		n, err := strconv.Atoi(f.DecisionTokenTTLSeconds)
		if err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, "decisionTokenTtlSeconds", "decisionTokenTtlSeconds must be a whole number of seconds")
		}
		in.DecisionTokenTTLSeconds = &n
	}
	return in, nil
}

// actionLabels name the action form's fields as the page labels them.
var actionLabels = Labels{"name": "Name", "description": "Description", "inputSchema": "Input schema",
	"editableFields": "Editable fields", "policy": "Policy", "decisionTokenTtlSeconds": "Decision token lifetime",
	"executors": "Executors"}

func (p *Pages) deleteAction(c *gin.Context) {
	err := confirmed(c, "action")
	if err == nil {
		err = p.gate.DeleteAction(c.Request.Context(), orgOf(c), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, actionLabels); ok {
			p.showActions(c, status, prob, newActionForm)
		}
		return
	}
	Done(c, "/admin/actions", "action-deleted")
}
