// Package page is an approval's page: the request with its input and
// metadata, the decision form (corrections, and the part that grants a
// standing mandate), questions for the requester, the confirm page a chat
// card opens, and the page an emailed decision link opens without signing
// in, rendered through the pages' kit (web.KindPage).
package page

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
)

//go:embed approval.html
var templates embed.FS

// Page is the page of the approvals of service; gate grants the standing
// mandates its approve form offers.
type Page struct {
	service *approvals.Service
	gate    *gate.Service
	pages   *web.Pages
}

// New is the page of service's approvals.
func New(service *approvals.Service, gate *gate.Service) *Page {
	return &Page{service: service, gate: gate}
}

// Templates holds the page's template.
func (*Page) Templates() fs.FS { return templates }

// Mount adds the page, its forms, the chat card's confirm page and the
// decision link's page to g.
func (p *Page) Mount(g gin.IRouter, pages *web.Pages) {
	p.pages = pages
	g.GET(paths.ApprovalPage, web.RequireSignIn, p.approval)
	g.POST("/approvals/:id/decision", web.RequireSignIn, p.decide)
	g.GET(paths.ApprovalDecidePage, web.RequireSignIn, p.confirmDecision)
	g.POST("/approvals/:id/questions", web.RequireSignIn, p.ask)
	g.GET(paths.DecisionLinkPage, p.linkApproval)
	g.POST(paths.DecisionLinkPage, p.decideByLink)
}

// formProblem is a refused form's problem: the field it is about and why,
// in a person's words.
type formProblem struct {
	Field, Message string
}

// field is one input field as the page shows it.
type field struct {
	Name string
	// Value is the JSON value as text: a string unquoted, anything else
	// as JSON.
	Value    string
	Kind     string // string, number, boolean or json
	Editable bool
	// Multiline is a string with line breaks, which a text input would
	// drop; the page offers a text area instead.
	Multiline bool
	// Invalid marks the field a refusal is about.
	Invalid bool
}

// approvalPage is the approval page's data.
type approvalPage struct {
	A        *approvals.Approval
	Fields   []field
	Metadata []field
	// Approver is whether the viewer may decide; Pending whether anyone
	// still can.
	Approver, Pending bool
	// AlreadyApproved is set when this approver approved and others must
	// still approve.
	AlreadyApproved bool
	// Action is where the decision form posts.
	Action string
	// Link is set on the page an emailed link opens without signing in:
	// it decides as the link's person, hides restricted fields and
	// offers no question form.
	Link *linkView
	// Submission makes a form's submission idempotent: it is the Update id.
	Submission string
	// Problem is why the last action was refused, shown above the forms;
	// ProblemField the form field it is about.
	Problem, ProblemField string
	Form                  typed
	// Changes are the corrections the decision made, less hidden fields.
	Changes []approvals.Change
	// Approved is the input as approved, corrections included, less
	// hidden fields: what runs.
	Approved []field
	// Confirm is the decision a chat card's button chose (approve or
	// reject): the page asks one click to confirm it, as proposed.
	Confirm string
	// StandsInFor names the person away whom the viewer is asked on
	// behalf of, when they are a delegate.
	StandsInFor string
	// Mandate is the approve form's standing approval part, nil unless
	// the signed-in person could grant one with this approval.
	Mandate *mandateOffer
}

// linkView is what the decision-link page adds.
type linkView struct {
	Person *accounts.Person
	// Hidden counts the restricted fields left out.
	Hidden int
	// Ended says why the link no longer decides (used or expired).
	Ended string
}

// typed is what the person typed, kept when an action is refused.
type typed struct {
	Note, Reason, Question string
	// Fields are the corrections as typed, by field name.
	Fields map[string]string
	// Mandate is the approve form's standing approval part as typed.
	Mandate mandateForm
}

// shower renders a page again with a refusal and what was typed.
type shower func(c *gin.Context, status int, prob formProblem, form typed)

func (p *Page) approval(c *gin.Context) {
	p.showApproval(c, http.StatusOK, formProblem{}, typed{})
}

// showApproval renders the approval in the path for the signed-in person,
// with prob (a refused action) and what they typed.
func (p *Page) showApproval(c *gin.Context, status int, prob formProblem, form typed) {
	page, person, ok := p.signedInApproval(c)
	if !ok {
		return
	}
	page.Problem, page.ProblemField, page.Form = prob.Message, prob.Field, form
	page.Mandate = offerMandate(c, page.A, form.Mandate, prob.Field)
	p.renderApproval(c, status, page, person.ID(), nil)
}

// signedInApproval reads the approval in the path as the signed-in person
// sees it, its decision form posting to the page's own decide; false once
// the failure is answered.
func (p *Page) signedInApproval(c *gin.Context) (*approvalPage, *accounts.Person, bool) {
	person := web.CurrentPerson(c)
	a, err := p.service.View(c.Request.Context(), person.Actor(), c.Param("id"))
	if err != nil {
		p.pages.Fail(c, err)
		return nil, nil, false
	}
	return &approvalPage{A: a, Approver: slices.Contains(a.ApproverIDs, person.ID()), Action: paths.Approval(a.ID) + "/decision",
		Submission: ids.New("sub")}, person, true
}

// confirmDecision is the page a Teams card's Approve or Reject opens
// (Teams cards cannot call back): the decision already chosen, one click
// to confirm it, as proposed, as the person signed in; the form posts to
// the page's own decide. A request that cannot be settled from chat, or
// that this person cannot decide, shows as its page does, saying why.
func (p *Page) confirmDecision(c *gin.Context) {
	decision := c.Param("decision")
	if decision != "approve" && decision != "reject" {
		p.pages.Fail(c, apperr.New(apperr.NotFound, "no such page"))
		return
	}
	page, person, ok := p.signedInApproval(c)
	if !ok {
		return
	}
	a := page.A
	canDecide := a.Status == states.Pending && page.Approver && !slices.Contains(a.ApprovedBy, person.ID())
	if ok, why := approvals.ChatSettle(a); canDecide && ok {
		page.Confirm = decision
	} else if canDecide {
		page.Problem = why + " Decide it below."
	}
	p.renderApproval(c, http.StatusOK, page, person.ID(), nil)
}

// renderApproval fills in what every approval page shows, leaving out the
// hidden fields, and renders it for personID.
func (p *Page) renderApproval(c *gin.Context, status int, page *approvalPage, personID string, hidden []string) {
	a := page.A
	page.Pending = a.Status == states.Pending
	page.AlreadyApproved = slices.Contains(a.ApprovedBy, personID)
	if v, ok := a.StandsInFor(personID); ok {
		page.StandsInFor = v.Name
	}
	for _, ch := range a.Changes.V {
		if !slices.Contains(hidden, ch.Field) {
			page.Changes = append(page.Changes, ch)
		}
	}
	var err error
	if page.Fields, err = fields(a.Input, a.EditableFields, hidden); err != nil {
		p.pages.Fail(c, err)
		return
	}
	// A refused decision shows the corrections as typed.
	for i := range page.Fields {
		f := &page.Fields[i]
		if v, ok := page.Form.Fields[f.Name]; ok && f.Editable {
			f.Value = v
			f.Multiline = f.Multiline || f.Kind == "string" && strings.ContainsAny(v, "\r\n")
		}
		f.Invalid = page.ProblemField == correctionField(f.Name)
	}
	if a.Status == states.Approved {
		if page.Approved, err = fields(a.ApprovedInput, nil, hidden); err != nil {
			p.pages.Fail(c, err)
			return
		}
	}
	if page.Metadata, err = fields(a.Metadata, nil, hidden); err != nil {
		p.pages.Fail(c, err)
		return
	}
	p.pages.Render(c, status, "approval", *page)
}

// decide handles the decision form: approve (with any corrected fields) or
// reject, through the same code as the REST endpoint. Each rendered form is
// its own Update (its submission id), so a double click acts once and a
// refusal is not replayed to the next try. Approving with the standing
// approval part ticked grants the mandate too (grantAndApprove); sent
// again once approved (a second click, a retry), it completes the same
// grant without deciding twice.
func (p *Page) decide(c *gin.Context) {
	person := web.CurrentPerson(c)
	ctx := c.Request.Context()
	a, err := p.service.View(ctx, person.Actor(), c.Param("id"))
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	d, form, err := decisionForm(c, a, nil)
	form.Mandate = readMandateForm(c)
	decideIt := func() error {
		_, err := p.service.Decide(ctx, a.OrganizationID, a.ID, c.PostForm("submission"), person.Actor(), d)
		return err
	}
	if err == nil && form.Mandate.On && d.Decision == "approve" {
		p.grantAndApprove(c, a, form, decideIt)
		return
	}
	if err == nil {
		err = decideIt()
	}
	if err != nil {
		p.refused(c, err, form, decisionLabels(a, nil), p.showApproval)
		return
	}
	c.Redirect(http.StatusSeeOther, paths.Approval(a.ID))
}

// decisionForm reads the decision form on a: the decision, and the
// corrections to editable fields that are not hidden. form keeps what the
// person typed, to show again with a refusal.
func decisionForm(c *gin.Context, a *approvals.Approval, hidden []string) (approvals.Decision, typed, error) {
	form := typed{Note: c.PostForm("note"), Reason: c.PostForm("reason"), Fields: map[string]string{}}
	d := approvals.Decision{Decision: c.PostForm("decision"), Note: form.Note, Reason: form.Reason}
	visible, err := fields(a.Input, a.EditableFields, hidden)
	if err != nil {
		return d, form, err
	}
	for _, f := range visible {
		if v, sent := c.GetPostForm("field." + f.Name); sent && f.Editable {
			form.Fields[f.Name] = web.FormText(v)
		}
	}
	if d.Decision == "approve" {
		if d.Corrections, err = corrections(c, visible); err != nil {
			return d, form, err
		}
	}
	return d, form, validate.Struct(&d)
}

// correctionField is the name refusals give a corrected field.
func correctionField(name string) string { return "corrections." + name }

// decisionLabels name the decision form's fields as the approval page
// labels them: an input field by its name, as shown.
func decisionLabels(a *approvals.Approval, hidden []string) web.Labels {
	l := web.Labels{"note": "Note", "reason": "Reason", "decision": "Decision"}
	visible, _ := fields(a.Input, a.EditableFields, hidden) // read once already by the page
	for _, f := range visible {
		l[correctionField(f.Name)] = f.Name
	}
	return l
}

// ask handles the question form.
func (p *Page) ask(c *gin.Context) {
	person := web.CurrentPerson(c)
	form := typed{Question: c.PostForm("question")}
	q := approvals.Question{Question: form.Question}
	if err := validate.Struct(&q); err != nil {
		p.refused(c, err, form, questionLabels, p.showApproval)
		return
	}
	if _, _, err := p.service.Ask(c.Request.Context(), person.Organization.ID, c.Param("id"), c.PostForm("submission"), person.Actor(), q); err != nil {
		p.refused(c, err, form, questionLabels, p.showApproval)
		return
	}
	c.Redirect(http.StatusSeeOther, paths.Approval(c.Param("id")))
}

// questionLabels name the question form's field.
var questionLabels = web.Labels{"question": "Your question for the requester"}

// refused shows the page again with why the action was refused, in the
// words of the form's labels, keeping what the person typed. Errors that
// are not the person's are a 500.
func (p *Page) refused(c *gin.Context, err error, form typed, l web.Labels, show shower) {
	e, ok := apperr.As(err)
	if !ok {
		p.pages.InternalError(c, err)
		return
	}
	show(c, e.Status(), formProblem{Field: e.Field, Message: web.PersonMessage(e, l)}, form)
}

// corrections reads the editable fields among current from the form and
// returns those the person changed, as JSON typed like the original
// value. A field not in current (a hidden one) cannot be corrected.
func corrections(c *gin.Context, current []field) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for _, f := range current {
		raw, sent := c.GetPostForm("field." + f.Name)
		// Browsers send a text area's line breaks as CRLF, whatever the
		// original had.
		raw = web.FormText(raw)
		if !f.Editable || !sent || raw == web.FormText(f.Value) {
			continue
		}
		v, err := parseField(f, raw)
		if err != nil {
			e := apperr.Field(apperr.InvalidRequest, correctionField(f.Name), "%s %v", f.Name, err)
			e.Says = err.Error()
			return nil, e
		}
		out[f.Name] = v
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// parseField reads a corrected value as the kind of the original, as
// JSON. A string is kept as typed; the rest are read without surrounding
// spaces, and a number keeps the digits typed.
func parseField(f field, raw string) (json.RawMessage, error) {
	if f.Kind == "string" {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(raw); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	}
	raw = strings.TrimSpace(raw)
	switch f.Kind {
	case "number":
		var n json.Number
		if err := json.Unmarshal([]byte(raw), &n); err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		return json.RawMessage(n), nil
	case "boolean":
		if raw != "true" && raw != "false" {
			return nil, fmt.Errorf("must be true or false")
		}
		return json.RawMessage(raw), nil
	}
	if !json.Valid([]byte(raw)) {
		return nil, fmt.Errorf("must be valid JSON")
	}
	return json.RawMessage(raw), nil
}

// fields lists a JSON object's members in their order, marking editable
// ones and leaving out restricted ones (hidden) at every depth. An empty
// object gives none.
func fields(raw []byte, editable, hidden []string) ([]field, error) {
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("stored object is not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		// Restricted members are left out at every depth; a field with
		// something left out inside it is shown but not editable, so a
		// correction cannot drop what the person never saw.
		shown, isHidden, removed, err := rules.RedactMember(name, v, hidden)
		if err != nil {
			return nil, err
		}
		if !isHidden {
			out = append(out, describe(name, shown, removed == 0 && slices.Contains(editable, name)))
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

func describe(name string, v json.RawMessage, editable bool) field {
	f := field{Name: name, Value: string(v), Kind: "json", Editable: editable}
	switch {
	case len(v) > 0 && v[0] == '"':
		var s string
		_ = json.Unmarshal(v, &s)
		f.Kind, f.Value, f.Multiline = "string", s, strings.ContainsAny(s, "\r\n")
	case string(v) == "true" || string(v) == "false":
		f.Kind = "boolean"
	case len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')):
		f.Kind = "number"
	}
	return f
}

// Inbox is the approvals' section of the inbox: each with its risk, an
// ethics flag, when it expires and, when it needs several, how many
// approved so far.
func (p *Page) Inbox(ctx context.Context, who accounts.Actor, order requests.InboxOrder, soon time.Time, limit int) (web.InboxSection, error) {
	return web.InboxOf(ctx, p.service, who, order, soon, limit, "", func(a *approvals.Approval) web.InboxRow {
		row := web.InboxRow{Path: paths.Approval(a.ID), Title: a.Title, Risk: a.Risk,
			Facts: []web.InboxFact{{Text: "Requested by " + a.RequestedBy}, {Text: "expires", At: &a.ExpiresAt}}}
		if len(a.Concerns.V) > 0 {
			row.Flag = "Ethics concern"
		}
		if a.RequiredApprovals > 1 {
			row.Facts = append(row.Facts, web.InboxFact{Text: fmt.Sprintf("%d of %d approvals", a.ApprovalsSoFar, a.RequiredApprovals)})
		}
		return row
	})
}
