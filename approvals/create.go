package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Factor is one line of the checklist shown with a request.
type Factor struct {
	Label  string `json:"label" validate:"required,max=200"`
	Status string `json:"status" validate:"required,oneof=ok warning info"`
	Detail string `json:"detail" validate:"max=2000"`
}

// Link is a labelled address shown with a request.
type Link struct {
	Label string `json:"label" validate:"required,max=200"`
	URL   string `json:"url" validate:"required,max=2048,http_url"`
}

// CreateInput is the create body with its limits. The tags are
// checked where it is bound; Create checks what tags cannot.
type CreateInput struct {
	requests.Fields
	Description    string          `json:"description" validate:"max=20000"`
	Risk           string          `json:"risk" validate:"omitempty,oneof=low medium high critical"`
	Factors        []Factor        `json:"factors" validate:"max=20,dive"`
	Links          []Link          `json:"links" validate:"max=10,dive"`
	ReportID       *string         `json:"reportId" validate:"omitempty,max=40" nullable:"true"`
	Approvers      []string        `json:"approvers" validate:"max=20,dive,required,max=320"`
	Input          json.RawMessage `json:"input" nullable:"true"`
	EditableFields []string        `json:"editableFields" validate:"max=100,dive,required,max=200"`
	Escalation     *Escalation     `json:"escalation" nullable:"true"`
	// Gate is set by the action gate on the approval it raises; no body
	// can set it.
	Gate *GateOrigin `json:"-"`
}

// GateOrigin is the action a gated approval was raised for.
type GateOrigin struct {
	Action string
	// InputSchema is the action's schema, which corrections are held to.
	InputSchema json.RawMessage
	// DecisionTokenTTLSeconds is the action's decision token lifetime, nil
	// for the organisation's.
	DecisionTokenTTLSeconds *int
}

// Escalation asks that the people in To become approvers if the request is
// still pending After its creation (a duration such as "4h", or seconds).
type Escalation struct {
	After json.RawMessage `json:"after" validate:"required"`
	To    []string        `json:"to" validate:"required,min=1,max=20,dive,required,max=320"`
}

// escalationRole resolves an escalation's people as approvers are, naming
// the escalation's field.
func escalationRole(org *models.Organization) requests.Role {
	r := ApproverRole(org)
	r.Field = "escalation.to"
	return r
}

// ApproverRole is how approvers are resolved and refused; the action gate's approval rules name people the same way.
func ApproverRole(org *models.Organization) requests.Role {
	return requests.Role{Field: "approvers", Unknown: apperr.UnknownApprover, Ambiguous: apperr.AmbiguousApprover,
		Guests: org.GuestsMayApprove, GuestRefusal: "a guest; this organisation does not let guests approve"}
}

// Create makes a pending approval for the caller and starts its workflow.
// The returned record carries the callback secret, shown once. With a
// claim (an Idempotency-Key), the record is bound to it as it is written,
// so a retry after a crash at any point resumes the same approval instead
// of making another.
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput, claim *models.Claim) (*Approval, error) {
	return s.Lifecycle.Create(ctx, claim, func() (*Approval, error) { return s.build(ctx, p, in) })
}

// Preview is the approval Create would make of in for p, without making
// it: whom it would ask, how many approvals it would need, its concerns.
// The gate weighs a mandate's authority against it.
func (s *Service) Preview(ctx context.Context, p models.Actor, in *CreateInput) (*Approval, error) {
	return s.build(ctx, p, in)
}

// Approvers are the people an approval naming refs would ask (the
// owners and administrators when refs is empty), with how each was
// reached (one standing in for someone away by a delegation).
func (s *Service) Approvers(ctx context.Context, org *models.Organization, refs []string) ([]string, map[string][]models.Via, error) {
	people, err := s.approvers(ctx, org, refs, requests.Handover{})
	return requests.IDsOf(people), requests.AskedVia(people), err
}

// build checks what the validator tags cannot and builds the record.
func (s *Service) build(ctx context.Context, p models.Actor, in *CreateInput) (*Approval, error) {
	now := models.Now()
	base, err := in.Base(ctx, p, now, s.netPolicy)
	if err != nil {
		return nil, err
	}
	rec := &Approval{RequestBase: base, Description: in.Description,
		Risk: in.Risk, ReportID: in.ReportID, Approvers: in.Approvers,
		EditableFields: in.EditableFields, RequiredApprovals: 1,
		ApprovedBy: models.StringList{},
	}
	if rec.Risk == "" {
		rec.Risk = models.RiskMedium
	}
	for _, f := range in.Factors {
		rec.Factors.V = append(rec.Factors.V, models.Factor(f))
	}
	for _, l := range in.Links {
		rec.Links.V = append(rec.Links.V, models.Link(l))
	}
	if rec.Input, err = requests.JSONObject("input", in.Input); err != nil {
		return nil, err
	}
	if err := decisions.OneMeaning("input", rec.Input); err != nil {
		return nil, err
	}
	if err := checkEditableFields(rec.Input, in.EditableFields); err != nil {
		return nil, err
	}
	if in.Gate != nil {
		rec.Action, rec.InputSchema = &in.Gate.Action, models.RawJSON(in.Gate.InputSchema)
		rec.DecisionTokenTTLSeconds = in.Gate.DecisionTokenTTLSeconds
	}
	asked, err := s.approvers(ctx, p.Organization, in.Approvers, requests.Handover{Requester: rec.Requester})
	if err != nil {
		return nil, err
	}
	rec.ApproverIDs, rec.ApproverVia.V = requests.IDsOf(asked), requests.AskedVia(asked)
	rec.Asked.V = models.AskedAs(rec.ApproverIDs, requests.Shown(asked))
	if in.Escalation != nil {
		after, err := requests.Duration("escalation.after", in.Escalation.After)
		if err != nil {
			return nil, err
		}
		if !now.Add(after).Before(rec.ExpiresAt) {
			return nil, apperr.Field(apperr.InvalidRequest, "escalation.after", "escalation.after must be shorter than the time until expiresAt (%s)",
				validate.Duration(rec.ExpiresAt.Sub(now).Truncate(time.Second)))
		}
		// Who stands in for those away is read when it fires (the workflow's
		// standIns), not now: they may be back, or gone, by then.
		ids, via, err := requests.ResolveNamed(ctx, s.store, p.Organization.ID, in.Escalation.To, escalationRole(p.Organization))
		if err != nil {
			return nil, err
		}
		setEscalation(rec, after, in.Escalation.To, ids, via)
	}
	if err := s.applyRules(ctx, p.Organization, rec, in); err != nil {
		return nil, err
	}
	return rec, nil
}

// setEscalation records an escalation on rec, and how it names its
// people (shown once they are approvers).
func setEscalation(rec *Approval, after time.Duration, to, ids []string, via map[string][]models.Via) {
	seconds := int(after / time.Second)
	rec.EscalationAfter, rec.EscalationTo, rec.EscalationIDs = &seconds, to, ids
	if rec.ApproverVia.V == nil {
		rec.ApproverVia.V = map[string][]models.Via{}
	}
	for id, v := range via {
		rec.ApproverVia.V[id] = append(rec.ApproverVia.V[id], v...)
	}
}

// approvers resolves the approvers named, each with how they were named;
// none named means the organisation's owners and administrators.
func (s *Service) approvers(ctx context.Context, org *models.Organization, refs []string, h requests.Handover) ([]models.PersonRef, error) {
	if len(refs) > 0 {
		return requests.ResolveVia(ctx, s.store, org.ID, refs, ApproverRole(org), h)
	}
	owners, err := s.defaultApprovers(ctx, org.ID, h)
	if err == nil && len(owners) == 0 {
		err = apperr.Field(apperr.UnknownApprover, "approvers", "nobody could approve this request: the organisation has no active owner or administrator")
	}
	return owners, err
}

// defaultApprovers are the organisation's active owners and
// administrators, each away replaced by who stands in for them on the
// request h describes, with how each was reached: who decides a request
// that names nobody, or one left without anyone able to settle it.
func (s *Service) defaultApprovers(ctx context.Context, orgID string, h requests.Handover) ([]models.PersonRef, error) {
	owners, err := s.store.ActiveMembers(ctx, orgID, models.RoleOwner, models.RoleAdmin)
	if err != nil || len(owners) == 0 {
		return nil, err
	}
	for i := range owners {
		owners[i].Via = []models.Via{models.ViaDefault("approvers")}
	}
	return requests.WithStandIns(ctx, s.store, orgID, owners, "approvers", h)
}

// applyRules evaluates the organisation's rules over the request as sent
// and records what they ask: more approvals, concerns, hidden fields.
func (s *Service) applyRules(ctx context.Context, org *models.Organization, rec *Approval, in *CreateInput) error {
	stored, err := s.store.EnabledRules(ctx, rec.OrganizationID)
	if err != nil || len(stored) == 0 {
		return err
	}
	rs := make([]rules.Rule, len(stored))
	for i, r := range stored {
		rs[i] = rules.Rule{Name: r.Name, Kind: r.Kind, Condition: r.Condition, RequiredApprovals: r.RequiredApprovals,
			Principle: r.Principle, Concern: r.Concern, Fields: r.Fields,
			EscalationAfter: time.Duration(r.EscalationAfter) * time.Second, EscalationTo: r.EscalationTo}
	}
	request, err := ruleInput(in, rec.Risk)
	if err != nil {
		return err
	}
	// A rule that could not be evaluated has applied already (rules fail
	// closed); the timeline and the approvers are told why.
	out := rules.Evaluate(rs, request)
	var why []string
	for _, u := range out.Unevaluated {
		s.log.Warn("rule did not evaluate; its stricter outcome applies", "organization", rec.OrganizationID, "rule", u.Rule, "error", u.Err)
		why = append(why, u.String())
		rec.Factors.V = append(rec.Factors.V, models.Factor{Label: "Organisation rule", Status: "warning", Detail: u.String()})
	}
	rec.UnevaluatedRules = why
	eligible := slices.DeleteFunc(slices.Clone(rec.ApproverIDs), func(id string) bool { return id == rec.Requester })
	if out.RequiredApprovals > len(eligible) {
		msg := fmt.Sprintf("an organisation rule needs %d approvals, but only %d people can approve this request", out.RequiredApprovals, len(eligible))
		if len(why) > 0 {
			msg += " (" + strings.Join(why, "; ") + ")"
		}
		return apperr.Field(apperr.InvalidRequest, "approvers", "%s", msg)
	}
	rec.RequiredApprovals = out.RequiredApprovals
	for _, c := range out.Concerns {
		rec.Concerns.V = append(rec.Concerns.V, models.Concern(c))
	}
	rec.RestrictedFields = out.RestrictedFields
	return s.ruleEscalation(ctx, org, rec, out.Escalation)
}

// ruleEscalation applies a rule's escalation when it comes sooner than the
// request's own and before the expiry. Its people are resolved now; a rule
// naming nobody who can approve any more is logged and skipped, since the
// agent cannot fix the organisation's rule.
func (s *Service) ruleEscalation(ctx context.Context, org *models.Organization, rec *Approval, e *rules.Escalation) error {
	if e == nil {
		return nil
	}
	if rec.EscalationAfter != nil && time.Duration(*rec.EscalationAfter)*time.Second <= e.After {
		return nil
	}
	if !models.Now().Add(e.After).Before(rec.ExpiresAt) {
		return nil
	}
	ids, via, err := requests.ResolveNamed(ctx, s.store, org.ID, e.To, escalationRole(org))
	var refused *apperr.Error
	if errors.As(err, &refused) {
		s.log.Warn("rule escalation skipped", "organization", org.ID, "rule", e.Rule, "error", err)
		return nil
	}
	if err != nil {
		return err
	}
	setEscalation(rec, e.After, e.To, ids, via)
	return nil
}

// ruleInput is the request as rule conditions see it: the fields as sent,
// with the default risk filled in.
func ruleInput(in *CreateInput, risk string) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	out["risk"] = risk
	return out, nil
}

// checkEditableFields requires each editable field to name a key of input
// whose value is flat: a string, number or boolean.
func checkEditableFields(input models.RawJSON, fields []string) error {
	var values map[string]json.RawMessage
	if len(input) > 0 {
		_ = json.Unmarshal(input, &values)
	}
	for i, f := range fields {
		field := fmt.Sprintf("editableFields[%d]", i)
		v, ok := values[f]
		if !ok {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is not a key of input", f)
		}
		if slices.Contains(fields[:i], f) {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is listed twice", f)
		}
		switch v[0] {
		case '{', '[', 'n':
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q must hold a string, number or boolean", f)
		}
	}
	return nil
}

// Start starts the workflow of rec, a record already stored: Create and
// the reconciler start every approval this way. A workflow that already
// exists for rec counts as started: its id is the record's id.
//
// The organisation's model screen, if it is on now, screens the approval
// before anyone is asked (WorkflowInput.Screen).
func (s *Service) Start(ctx context.Context, rec *Approval) error {
	in := workflowInput(rec)
	var err error
	if in.Screen, err = s.store.ModelScreenOn(ctx, rec.OrganizationID); err != nil {
		return err
	}
	return s.StartWorkflow(ctx, &rec.RequestBase, in, workflows.SearchRisk.ValueSet(rec.Risk))
}

// workflowInput is what the workflow of rec needs.
func workflowInput(rec *Approval) WorkflowInput {
	in := WorkflowInput{
		RequestInput:      requests.InputOf(&rec.RequestBase, rec.ApproverVia.V),
		ApprovalID:        rec.ID,
		Risk:              rec.Risk,
		RequiredApprovals: rec.RequiredApprovals,
		ApproverIDs:       rec.ApproverIDs,
		EditableFields:    rec.EditableFields,
		ReasonRequired:    len(rec.Concerns.V) > 0,
		Input:             json.RawMessage(rec.Input),
	}
	if rec.EscalationAfter != nil {
		in.Escalation = &ScheduledEscalation{At: rec.CreatedAt.Add(time.Duration(*rec.EscalationAfter) * time.Second),
			ApproverIDs: rec.EscalationIDs}
	}
	if ids.HasPrefix(rec.Requester, ids.Member) {
		in.RequesterMemberID = rec.Requester
	}
	return in
}
