// Package gate is the action gate: an organisation
// registers the actions its agents run, each with the JSON Schema of its
// input and a policy; an agent asks the gate before running one and is
// allowed (with a decision token), denied (gate.denied), or handed an
// ordinary approval whose corrections stay within the schema.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/actionschema"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Store is what the gate reads and writes through.
type Store interface {
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	ClaimedResource(ctx context.Context, c *models.Claim) (string, error)
	BindClaim(ctx context.Context, c *models.Claim, id string) (string, error)
	flows.Getter
	NextSeq(ctx context.Context, orgID, subjectID string) (int, error)
	Audit(ctx context.Context, e *models.AuditEntry) error
	Emit(ctx context.Context, e *models.Event) error

	CreateAction(ctx context.Context, a *models.Action) error
	SaveAction(ctx context.Context, a *models.Action) error
	GetAction(ctx context.Context, orgID, id string) (*models.Action, error)
	ActionNamed(ctx context.Context, orgID, name string) (*models.Action, error)
	ListActions(ctx context.Context, orgID string, p models.Page) ([]models.Action, string, error)
	DeleteAction(ctx context.Context, orgID, id string) error

	InsertGateCheck(ctx context.Context, c *models.GateCheck) (bool, error)
	GetGateCheck(ctx context.Context, orgID, id string) (*models.GateCheck, error)
	GateCheckOfApproval(ctx context.Context, orgID, approvalID string) (*models.GateCheck, error)

	InsertMandate(ctx context.Context, m *models.Mandate) error
	LockMandate(ctx context.Context, orgID, id string, t time.Time) (*models.Mandate, error)
	SaveRevocation(ctx context.Context, m *models.Mandate) error
	InsertMandateUse(ctx context.Context, u *models.MandateUse) error
	GetMandate(ctx context.Context, orgID, id string) (*models.Mandate, error)
	MandateOfApproval(ctx context.Context, orgID, approvalID string) (*models.Mandate, error)
	ListMandates(ctx context.Context, orgID string, f models.MandateFilter, p models.Page) ([]models.Mandate, string, error)
	LiveMandates(ctx context.Context, orgID, action string) ([]models.Mandate, error)

	DecisionSigner(ctx context.Context) (*models.DecisionSigner, error)
	GetMember(ctx context.Context, orgID, id string) (*models.Member, error)
	ActiveAgentKeys(ctx context.Context, orgID string, ids []string) ([]models.APIKey, error)
	EnabledRules(ctx context.Context, orgID string) ([]models.Rule, error)
	requests.Directory
}

// Service keeps the organisation's actions and answers checks.
type Service struct {
	store     Store
	approvals *approvals.Service
	log       *slog.Logger
	// issuer, the instance's public address, names it in decision tokens
	// ("" issues none).
	issuer string
}

// New returns the gate over store, raising approvals through approvals
// and naming the instance as issuer in decision tokens.
func New(store Store, approvals *approvals.Service, log *slog.Logger, issuer string) *Service {
	return &Service{store: store, approvals: approvals, log: log, issuer: issuer}
}

// SetIssuer names the instance in decision tokens: its configured public
// address, when that is not the address it was built with ("" issues no
// tokens).
func (s *Service) SetIssuer(issuer string) { s.issuer = issuer }

// CheckInput is a question put to the gate.
type CheckInput struct {
	Action     string          `json:"action" validate:"required,max=200"`
	Input      json.RawMessage `json:"input" nullable:"true"`
	FlowID     *string         `json:"flowId" validate:"omitempty,max=40" nullable:"true"`
	ExternalID *string         `json:"externalId" validate:"omitempty,max=255" nullable:"true"`
}

// Result is the gate's answer: a recorded check, and for approval_required
// the approval it raised. A denial is an error (gate_denied) carrying the
// rule's reason; its check is recorded all the same.
type Result struct {
	Check    *models.GateCheck
	Approval *approvals.Approval
}

// Check answers whether the caller may run an action with an input. The
// input is held to the action's schema first; then the first policy rule
// whose condition holds decides, and none matching means an approval by
// the owners and administrators. With a claim (an Idempotency-Key) a
// retry gets the first answer, never a second check or approval.
func (s *Service) Check(ctx context.Context, p models.Actor, in *CheckInput, claim *models.Claim) (*Result, error) {
	// A retry answers as the first attempt did, whatever became of the
	// action since.
	earlier, err := s.store.ClaimedResource(ctx, claim)
	switch {
	case err != nil:
		return nil, err
	case ids.HasPrefix(earlier, ids.GateCheck):
		c, err := s.store.GetGateCheck(ctx, p.Organization.ID, earlier)
		if err != nil {
			return nil, err
		}
		return s.replay(c)
	case ids.HasPrefix(earlier, ids.Approval):
		return s.raised(ctx, p, nil, &approvals.CreateInput{}, claim, models.PolicyRule{}, "")
	}
	action, err := s.store.ActionNamed(ctx, p.Organization.ID, in.Action)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Field(apperr.NotFound, "action", "no action named %q is registered", in.Action)
	}
	if err != nil {
		return nil, err
	}
	input, err := requests.JSONObject("input", in.Input)
	if err != nil {
		return nil, err
	}
	if err := decisions.OneMeaning("input", input); err != nil {
		return nil, err
	}
	if input == nil {
		input = []byte("{}")
	}
	if err := holdToSchema(action.InputSchema, input); err != nil {
		return nil, err
	}
	rule, unevaluated := s.decide(action, input, callerOf(p))
	if rule.Outcome == rules.GateApproval {
		approval := approvalFor(action, rule, unevaluated, input, in)
		// A policy that failed closed is never stood in for by a mandate.
		if unevaluated == "" {
			if r, err := s.byMandate(ctx, p, action, rule, input, in, approval, claim); r != nil || err != nil {
				return r, err
			}
		}
		return s.raised(ctx, p, action, approval, claim, rule, unevaluated)
	}
	check := checkOf(p, action, rule, input, in)
	record := checkRecord{check: check, by: p}
	switch rule.Outcome {
	case rules.GateAllow:
		check.Decision = models.GateAllowed
		if record.token, err = s.tokens(ctx, action, p.Organization); err != nil {
			return nil, err
		}
	case rules.GateDeny:
		check.Decision, check.Reason = models.GateDenied, rule.Reason
		if check.Reason == "" {
			check.Reason = deniedBy(rule.Name, "")
		}
		record.denied = true
	}
	c, err := s.record(ctx, record, claim)
	if err != nil {
		return nil, err
	}
	return s.replay(c)
}

// byMandate allows a check a live mandate covers, spending its budget in
// the check's transaction, its token naming the mandate and its granter.
// Nil, nil means none covers it (or the budget went to concurrent checks):
// a person decides.
func (s *Service) byMandate(ctx context.Context, p models.Actor, action *models.Action, rule models.PolicyRule, input []byte,
	in *CheckInput, approval *approvals.CreateInput, claim *models.Claim) (*Result, error) {
	spends, err := s.covering(ctx, p, action, input, approval)
	if err != nil || len(spends) == 0 {
		return nil, err
	}
	check := checkOf(p, action, rule, input, in)
	check.Decision = models.GateAllowed
	record := checkRecord{check: check, by: p, spends: spends}
	if record.token, err = s.tokens(ctx, action, p.Organization); err != nil {
		return nil, err
	}
	c, err := s.record(ctx, record, claim)
	if errors.Is(err, errSpent) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.replay(c)
}

// raised creates (or, for a retried claim, resumes) the approval a check
// needs, then records the check, once per approval. A retry after a crash
// between the two records the check from the approval, as it was asked.
func (s *Service) raised(ctx context.Context, p models.Actor, action *models.Action, in *approvals.CreateInput,
	claim *models.Claim, rule models.PolicyRule, unevaluated string) (*Result, error) {
	a, err := s.approvals.Create(ctx, p, in, claim)
	if err != nil {
		return nil, err
	}
	check := checkBy(p)
	check.Input, check.Decision, check.Rule, check.Reason = models.RawJSON(a.Input), models.GateApprovalRequired, rule.Name, unevaluated
	check.ApprovalID, check.FlowID, check.ExternalID = &a.ID, a.FlowID, a.ExternalID
	if a.Action != nil {
		check.Action = *a.Action
	}
	if action == nil {
		action, _ = s.store.ActionNamed(ctx, a.OrganizationID, check.Action) // nil once deleted
	}
	if action != nil {
		check.ActionID = action.ID
	}
	c, err := s.record(ctx, checkRecord{check: check, by: p}, nil)
	if err != nil {
		return nil, err
	}
	return &Result{Check: c, Approval: a}, nil
}

// tokens signs an allowed check's decision token, with the key read
// before the check's transaction. An instance without its public base URL
// cannot name itself as the issuer and issues none.
func (s *Service) tokens(ctx context.Context, a *models.Action, org *models.Organization) (func(*models.GateCheck) (string, error), error) {
	if s.issuer == "" {
		return nil, nil
	}
	signer, err := s.store.DecisionSigner(ctx)
	if err != nil {
		return nil, err
	}
	return func(c *models.GateCheck) (string, error) {
		claims, err := decisions.ForGateCheck(c, a, org, s.issuer)
		if err != nil {
			return "", err
		}
		return signer.Sign(claims)
	}, nil
}

// replay answers with a recorded allow or deny; a denial names its rule
// before the rule's reason.
func (s *Service) replay(c *models.GateCheck) (*Result, error) {
	if c.Decision == models.GateDenied {
		return nil, apperr.New(apperr.GateDenied, "%s", deniedBy(c.Rule, c.Reason))
	}
	return &Result{Check: c}, nil
}

// deniedBy is a denial's message: the rule, then its reason when it gave
// one.
func deniedBy(rule, reason string) string {
	msg := fmt.Sprintf("the policy rule %q denies it", rule)
	if reason == "" || reason == msg {
		return msg
	}
	return msg + ": " + reason
}

// holdToSchema refuses an input its action's schema does not accept,
// naming the failing path under input.
func holdToSchema(schemaDoc, input []byte) error {
	schema, err := actionschema.Compile(schemaDoc)
	if err != nil { // checked when the action was saved
		return fmt.Errorf("action schema: %w", err)
	}
	v := schema.Validate(input)
	if v == nil {
		return nil
	}
	field := "input"
	if v.Path != "" {
		field += "." + v.Path
	}
	return apperr.Field(apperr.InvalidRequest, field, "%s %s (the action's input schema)", field, v.Message)
}

// checkBy starts the record of a check p asks.
func checkBy(p models.Actor) *models.GateCheck {
	caller := callerOf(p)
	return &models.GateCheck{OrganizationID: p.Organization.ID, CallerKind: caller["kind"], CallerID: caller["id"], CallerName: caller["name"]}
}

// checkOf starts the record of a check p asks of action with input, which
// rule decides (or, by a mandate, stands in for).
func checkOf(p models.Actor, action *models.Action, rule models.PolicyRule, input []byte, in *CheckInput) *models.GateCheck {
	check := checkBy(p)
	check.ActionID, check.Action, check.Input, check.Rule, check.FlowID, check.ExternalID =
		action.ID, action.Name, input, rule.Name, in.FlowID, in.ExternalID
	return check
}

// callerOf is the caller as policy conditions see it.
func callerOf(p models.Actor) map[string]string {
	kind := "agent"
	if p.Member() != nil {
		kind = "member"
	}
	return map[string]string{"kind": kind, "id": p.ID, "name": p.Name}
}

// noRuleMatched is what decides when no rule of the policy holds: an
// approval by the owners and administrators.
var noRuleMatched = models.PolicyRule{Outcome: rules.GateApproval}

// decide returns the rule that decides a check. The gate fails closed: a
// rule whose condition cannot be evaluated for this input (a field it
// lacks, a value of another type) decides nothing, and the owners and
// administrators are asked instead of letting a later rule allow it; the
// check names that rule and why.
func (s *Service) decide(a *models.Action, input []byte, caller map[string]string) (rule models.PolicyRule, unevaluated string) {
	var value any
	if err := json.Unmarshal(input, &value); err != nil {
		return noRuleMatched, "the input could not be read for the policy: " + err.Error()
	}
	conditions := make([]string, len(a.Policy.V))
	for i, r := range a.Policy.V {
		conditions[i] = r.Condition
	}
	i, err := rules.FirstGateMatch(conditions, value, caller)
	if err != nil {
		s.log.Warn("gate policy condition did not evaluate; a person decides", "organization", a.OrganizationID, "action", a.Name, "error", err)
		failed := noRuleMatched
		failed.Name = a.Policy.V[i].Name
		return failed, fmt.Sprintf("the condition of rule %q could not be evaluated for this input (%v), so a person decides", failed.Name, err)
	}
	if i < 0 {
		return noRuleMatched, ""
	}
	return a.Policy.V[i], ""
}

// approvalFor is the ordinary approval a check raises: the action's
// editable fields (those the input holds as flat values), the rule's risk,
// approvers and expiry.
func approvalFor(a *models.Action, rule models.PolicyRule, unevaluated string, input []byte, in *CheckInput) *approvals.CreateInput {
	title := a.Description
	if title == "" || utf8.RuneCountInString(title) > 200 {
		title = "Run " + a.Name // names are ASCII, at most 200
		title = title[:min(len(title), 200)]
	}
	out := &approvals.CreateInput{
		Fields:      requests.Fields{Title: title, FlowID: in.FlowID, ExternalID: in.ExternalID},
		Description: a.Description, Risk: rule.Risk, Approvers: rule.Approvers,
		Input: input, EditableFields: presentFlat(input, a.EditableFields),
		Factors: []approvals.Factor{{Label: "Action", Status: "info", Detail: a.Name}},
		Gate: &approvals.GateOrigin{Action: a.Name, InputSchema: json.RawMessage(a.InputSchema),
			DecisionTokenTTLSeconds: a.DecisionTokenTTLSeconds},
	}
	switch {
	case unevaluated != "":
		out.Factors = append(out.Factors, approvals.Factor{Label: "Policy", Status: "warning", Detail: unevaluated})
	case rule.Name != "":
		out.Factors = append(out.Factors, approvals.Factor{Label: "Policy rule", Status: "warning", Detail: rule.Name})
	default:
		out.Factors = append(out.Factors, approvals.Factor{Label: "Policy", Status: "info", Detail: "no rule matched, so a person decides"})
	}
	if rule.ExpiresIn != "" {
		d, _ := time.ParseDuration(rule.ExpiresIn) // written by checkRule
		at := models.Now().Add(d).UTC().Format(time.RFC3339Nano)
		out.ExpiresAt = &at
	}
	return out
}

// presentFlat keeps the editable fields the input holds as a string,
// number or boolean: an approval can only offer those.
func presentFlat(input []byte, fields []string) []string {
	var values map[string]json.RawMessage
	_ = json.Unmarshal(input, &values)
	out := []string{}
	for _, f := range fields {
		v := strings.TrimSpace(string(values[f]))
		if v != "" && !strings.ContainsAny(v[:1], "{[n") {
			out = append(out, f)
		}
	}
	return out
}
