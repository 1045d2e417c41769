package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/actionschema"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// ActionInput is an action to register, or the whole of one to change.
// Its tags check each field on its own; build checks the rest.
type ActionInput struct {
	Name           string          `json:"name" validate:"required,max=200"`
	Description    string          `json:"description" validate:"max=2000"`
	InputSchema    json.RawMessage `json:"inputSchema" validate:"required"`
	EditableFields []string        `json:"editableFields" validate:"max=100,dive,required,max=200"`
	Policy         []PolicyRule    `json:"policy" validate:"max=50,dive"`
	// DecisionTokenTTLSeconds sets how long this action's decision tokens
	// stay valid, over the organisation's setting.
	DecisionTokenTTLSeconds *int `json:"decisionTokenTtlSeconds" validate:"omitempty,min=60,max=2592000" nullable:"true"`
	// Executors are agent key ids that may report receipts of this
	// action's tokens, beside who each token was issued to.
	Executors []string `json:"executors" validate:"max=20,dive,required,max=60"`
}

// PolicyRule is one rule of an action's policy: the first whose condition
// holds decides a check.
type PolicyRule struct {
	Name string `json:"name" validate:"required,max=200"`
	// Condition is CEL over input and caller (kind, id, name); empty holds
	// always.
	Condition string `json:"condition" validate:"max=4000"`
	Outcome   string `json:"outcome" validate:"required,oneof=allow deny approval"`
	// Reason is what a deny tells the caller.
	Reason string `json:"reason" validate:"max=2000"`
	// Risk, Approvers and ExpiresIn shape the approval an approval rule
	// raises.
	Risk      string          `json:"risk" validate:"omitempty,oneof=low medium high critical"`
	Approvers []string        `json:"approvers" validate:"max=20,dive,required,max=320"`
	ExpiresIn json.RawMessage `json:"expiresIn"`
}

// actionName keeps names plain enough for tokens, logs and CEL: letters,
// digits and . _ - : / (refund.create, crm/contacts:delete).
var actionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]*$`)

// CreateAction registers an action.
func (s *Service) CreateAction(ctx context.Context, org *models.Organization, in *ActionInput) (*models.Action, error) {
	a := &models.Action{OrganizationID: org.ID}
	if err := s.build(ctx, org, a, in); err != nil {
		return nil, err
	}
	return a, s.store.CreateAction(ctx, a)
}

// UpdateAction replaces an action's definition; checks already made and
// approvals already raised keep what it said then.
func (s *Service) UpdateAction(ctx context.Context, org *models.Organization, id string, in *ActionInput) (*models.Action, error) {
	a, err := s.store.GetAction(ctx, org.ID, id)
	if err != nil {
		return nil, err
	}
	if err := s.build(ctx, org, a, in); err != nil {
		return nil, err
	}
	return a, s.store.SaveAction(ctx, a)
}

// GetAction returns one of the organisation's actions.
func (s *Service) GetAction(ctx context.Context, orgID, id string) (*models.Action, error) {
	return s.store.GetAction(ctx, orgID, id)
}

// ListActions pages through the organisation's actions.
func (s *Service) ListActions(ctx context.Context, orgID string, p models.Page) ([]models.Action, string, error) {
	return s.store.ListActions(ctx, orgID, p)
}

// DeleteAction removes an action; its checks and the approvals they
// raised stay.
func (s *Service) DeleteAction(ctx context.Context, orgID, id string) error {
	return s.store.DeleteAction(ctx, orgID, id)
}

// build checks what the tags cannot, so a broken action is refused when
// saved, not when an agent asks, and copies in onto a.
func (s *Service) build(ctx context.Context, org *models.Organization, a *models.Action, in *ActionInput) error {
	if err := validate.Struct(in); err != nil {
		return err
	}
	if !actionName.MatchString(in.Name) {
		return apperr.Field(apperr.InvalidRequest, "name", "name may hold letters, digits and . _ - : / and must start with a letter or digit")
	}
	if _, err := actionschema.Compile(in.InputSchema); err != nil {
		return apperr.Field(apperr.InvalidRequest, "inputSchema", "%v", err)
	}
	if err := checkEditable(in.InputSchema, in.EditableFields); err != nil {
		return err
	}
	executors, err := s.agentKeys(ctx, org.ID, "executors", in.Executors)
	if err != nil {
		return err
	}
	policy := make([]models.PolicyRule, len(in.Policy))
	for i := range in.Policy {
		var err error
		if policy[i], err = s.checkRule(ctx, org, i, &in.Policy[i]); err != nil {
			return err
		}
	}
	var schema bytes.Buffer
	_ = json.Compact(&schema, in.InputSchema) // it compiled, so it is JSON
	a.Name, a.Description, a.InputSchema = in.Name, in.Description, models.RawJSON(schema.Bytes())
	a.EditableFields, a.Policy.V, a.DecisionTokenTTLSeconds = models.StringList(in.EditableFields), policy, in.DecisionTokenTTLSeconds
	if a.EditableFields == nil {
		a.EditableFields = models.StringList{}
	}
	a.Executors = executors
	return nil
}

// checkRule checks one policy rule: a condition that compiles, and only
// the fields its outcome uses.
func (s *Service) checkRule(ctx context.Context, org *models.Organization, i int, r *PolicyRule) (models.PolicyRule, error) {
	field := func(name string) string { return fmt.Sprintf("policy[%d].%s", i, name) }
	out := models.PolicyRule{Name: r.Name, Condition: strings.TrimSpace(r.Condition), Outcome: r.Outcome, Reason: r.Reason,
		Risk: r.Risk, Approvers: r.Approvers}
	if err := rules.CheckGate(out.Condition); err != nil {
		return out, apperr.Field(apperr.InvalidRequest, field("condition"), "%v", err)
	}
	if r.Outcome != rules.GateDeny && r.Reason != "" {
		return out, apperr.Field(apperr.InvalidRequest, field("reason"), "reason belongs to deny rules")
	}
	if r.Outcome != rules.GateApproval {
		for name, set := range map[string]bool{"risk": r.Risk != "", "approvers": len(r.Approvers) > 0, "expiresIn": len(r.ExpiresIn) > 0} {
			if set {
				return out, apperr.Field(apperr.InvalidRequest, field(name), "%s belongs to approval rules", name)
			}
		}
		return out, nil
	}
	if len(r.ExpiresIn) > 0 {
		d, err := requests.Duration(field("expiresIn"), r.ExpiresIn)
		if err != nil {
			return out, err
		}
		if d > org.MaxApprovalExpiry() {
			return out, apperr.Field(apperr.InvalidRequest, field("expiresIn"), "%s is longer than this organisation lets a request wait", field("expiresIn"))
		}
		out.ExpiresIn = shortDuration(d)
	}
	if len(r.Approvers) > 0 {
		role := approvals.ApproverRole(org)
		role.Field = field("approvers")
		if _, err := requests.Resolve(ctx, s.store, org.ID, r.Approvers, role); err != nil {
			return out, err
		}
	}
	return out, nil
}

// checkEditable requires each editable field to be a property the schema
// declares at the top of the input, listed once.
func checkEditable(schema json.RawMessage, fields []string) error {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &top)
	for i, f := range fields {
		field := fmt.Sprintf("editableFields[%d]", i)
		if _, ok := top.Properties[f]; !ok {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is not a property the input schema declares", f)
		}
		if slices.Contains(fields[:i], f) {
			return apperr.Field(apperr.InvalidRequest, field, "editable field %q is listed twice", f)
		}
	}
	return nil
}

// shortDuration writes d as Go parses it, without zero units: 2h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String() // 2h0m0s, 1h30m0s, 45m0s
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
