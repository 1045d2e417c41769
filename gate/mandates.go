package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// Standing mandates: a person's approval, given once, of the checks of one
// action that a condition, the agent keys, a budget per window and its
// times bound. The gate consults them after its policy's deny rules and
// before asking a person (Check); the budget is spent in the check's own
// transaction (record).

// MaxMandateLife is the longest a mandate may hold.
const MaxMandateLife = 366 * 24 * time.Hour

// GrantInput is a mandate as a member grants it.
type GrantInput struct {
	Action    string   `json:"action" validate:"required,max=200"`
	Condition string   `json:"condition" validate:"max=2000"`
	Agents    []string `json:"agents" validate:"max=20,dive,required,max=60"`
	Budget    *Budget  `json:"budget" validate:"required"`
	StartsAt  *string  `json:"startsAt" nullable:"true"`
	ExpiresAt string   `json:"expiresAt" validate:"required"`
	Note      string   `json:"note" validate:"max=2000"`
}

// Budget bounds a mandate's uses per window: a count, a sum of one numeric
// field of the input, or both.
type Budget struct {
	Count  *int       `json:"count" validate:"omitempty,min=1,max=1000000" nullable:"true"`
	Sum    *SumBudget `json:"sum" nullable:"true"`
	Window string     `json:"window" validate:"required,oneof=hour day week mandate"`
}

// SumBudget bounds the sum of the input's numeric Field.
type SumBudget struct {
	Field string  `json:"field" validate:"required,max=200"`
	Max   float64 `json:"max" validate:"gt=0"`
}

// MandateFilter narrows a list of mandates (models.MandateFilter).
type MandateFilter = models.MandateFilter

// Grant stores a mandate who grants through the API: an owner or
// administrator, or any member where the organisation lets members grant,
// for an action whose policy raises approvals they could decide alone.
func (s *Service) Grant(ctx context.Context, who models.Actor, in GrantInput) (*models.Mandate, error) {
	granter, action, m, err := s.mandate(ctx, who, in)
	if err != nil {
		return nil, err
	}
	if err := s.grantable(ctx, who.Organization, granter, action); err != nil {
		return nil, err
	}
	return m, s.create(ctx, who, m)
}

// GrantFrom grants a mandate while who approves a, a pending approval
// the gate raised for an agent: for a's action and agent unless in names
// others, its condition holding for a's input, and who able to decide a
// alone. The mandate is checked, then approve runs (the decision), then
// the mandate is stored, so a refused mandate decides nothing.
func (s *Service) GrantFrom(ctx context.Context, who models.Actor, a *approvals.Approval, in GrantInput, approve func() error) (*models.Mandate, error) {
	if err := fromAgent(a); err != nil {
		return nil, err
	}
	in.Action = *a.Action
	if len(in.Agents) == 0 {
		in.Agents = []string{a.Requester}
	}
	granter, _, m, err := s.mandate(ctx, who, in)
	if err != nil {
		return nil, err
	}
	if err := decidableAlone(who.Organization, granter, a); err != nil {
		return nil, err
	}
	var value any
	_ = json.Unmarshal(a.Input, &value)
	if !holds(m.Condition, value, map[string]string{"kind": "agent", "id": a.Requester, "name": a.RequestedBy}) {
		return nil, apperr.Field(apperr.InvalidRequest, "condition", "condition must hold for this request's input, so the mandate covers requests like it")
	}
	// Sent again once approved (a double click, a retry after a failure),
	// the grant completes without deciding twice.
	if !approvedBy(a, granter) {
		if err := approve(); err != nil {
			return nil, err
		}
	}
	m.ApprovalID = &a.ID
	return m, s.create(ctx, who, m)
}

// GrantableFrom is why GrantFrom would refuse who a mandate with a,
// whatever its terms, or nil: a is a pending approval the gate raised for
// an agent, and who a member allowed to grant who could decide it alone.
// The approval page offers a mandate only when it is nil.
func GrantableFrom(who models.Actor, a *approvals.Approval) error {
	if err := fromAgent(a); err != nil {
		return err
	}
	granter, err := granterOf(who)
	if err != nil {
		return err
	}
	return decidableAlone(who.Organization, granter, a)
}

// fromAgent refuses an approval the gate did not raise for an agent key.
func fromAgent(a *approvals.Approval) error {
	if a.Action == nil || !ids.HasPrefix(a.Requester, ids.Key) {
		return apperr.New(apperr.InvalidRequest, "only an approval the gate raised for an agent can grant a mandate")
	}
	return nil
}

// granterOf is the member who grants as who, refusing keys, guests and
// members the organisation does not let grant.
func granterOf(who models.Actor) (*models.Member, error) {
	granter := who.Member()
	if !who.IsPerson || granter == nil {
		return nil, apperr.New(apperr.Forbidden, "a mandate is a person's standing approval: grant it with a member token or from an approval page")
	}
	if !mayGrant(who.Organization, granter) {
		return nil, apperr.New(apperr.Forbidden, "only owners and administrators grant mandates in this organisation (membersMayGrantMandates is off)")
	}
	return granter, nil
}

// decidableAlone refuses a mandate granted with a unless a is pending (or
// already approved by granter: the same grant sent again) and granter
// could decide it alone (authority).
func decidableAlone(org *models.Organization, granter *models.Member, a *approvals.Approval) error {
	if a.Status != states.Pending && !approvedBy(a, granter) {
		return apperr.New(apperr.Conflict, "approval %s is %s", a.ID, a.Status)
	}
	if why := authority(org, granter, a); why != "" {
		return apperr.New(apperr.Forbidden, "a mandate cannot stand for this approval: %s", why)
	}
	return nil
}

// mandate checks in for who and builds the mandate, not yet stored, with
// the action it is for.
func (s *Service) mandate(ctx context.Context, who models.Actor, in GrantInput) (*models.Member, *models.Action, *models.Mandate, error) {
	granter, err := granterOf(who)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := validate.Struct(&in); err != nil {
		return nil, nil, nil, err
	}
	action, err := s.store.ActionNamed(ctx, who.Organization.ID, in.Action)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil, nil, apperr.Field(apperr.NotFound, "action", "no action named %q is registered", in.Action)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	m := &models.Mandate{OrganizationID: who.Organization.ID, Action: action.Name, Condition: strings.TrimSpace(in.Condition),
		Agents: models.StringList{}, BudgetCount: in.Budget.Count, BudgetWindow: in.Budget.Window, Note: strings.TrimSpace(in.Note),
		GranterID: granter.ID, GranterName: granter.DisplayName()}
	if err := rules.CheckGate(m.Condition); err != nil {
		return nil, nil, nil, apperr.Field(apperr.InvalidRequest, "condition", "%v", err)
	}
	if in.Budget.Count == nil && in.Budget.Sum == nil {
		return nil, nil, nil, apperr.Field(apperr.InvalidRequest, "budget", "budget needs a count, a sum, or both: a mandate is bounded")
	}
	if in.Budget.Sum != nil {
		if err := checkSumField(action.InputSchema, in.Budget.Sum.Field); err != nil {
			return nil, nil, nil, err
		}
		m.BudgetSumField, m.BudgetSum = &in.Budget.Sum.Field, &in.Budget.Sum.Max
	}
	if err := mandateTimes(m, in); err != nil {
		return nil, nil, nil, err
	}
	if m.Agents, err = s.agentKeys(ctx, who.Organization.ID, "agents", in.Agents); err != nil {
		return nil, nil, nil, err
	}
	return granter, action, m, nil
}

// mandateTimes sets m's start (now unless given) and expiry: after the
// start and now, within MaxMandateLife of the start.
func mandateTimes(m *models.Mandate, in GrantInput) error {
	now := models.Now()
	m.StartsAt = now
	if in.StartsAt != nil {
		t, err := requests.Timestamp("startsAt", *in.StartsAt)
		if err != nil {
			return err
		}
		m.StartsAt = t
	}
	expires, err := requests.Timestamp("expiresAt", in.ExpiresAt)
	if err != nil {
		return err
	}
	switch {
	case !expires.After(m.StartsAt) || !expires.After(now):
		return apperr.Field(apperr.InvalidRequest, "expiresAt", "expiresAt must come after startsAt and be in the future")
	case expires.Sub(m.StartsAt) > MaxMandateLife:
		return apperr.Field(apperr.InvalidRequest, "expiresAt", "a mandate holds at most 366 days after it starts")
	}
	m.ExpiresAt = expires
	return nil
}

// agentKeys checks that each key named (in field[i]) is one of the
// organisation's active agent keys, and returns them once each, in order:
// a mandate's agents and an action's executors.
func (s *Service) agentKeys(ctx context.Context, orgID, field string, named []string) (models.StringList, error) {
	keys, err := s.store.ActiveAgentKeys(ctx, orgID, named)
	if err != nil {
		return nil, err
	}
	out := models.StringList{}
	for i, id := range named {
		if !slices.ContainsFunc(keys, func(k models.APIKey) bool { return k.ID == id }) {
			return nil, apperr.Field(apperr.InvalidRequest, fmt.Sprintf("%s[%d]", field, i), "%q is not an active agent key of this organisation", id)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// AgentNames names the organisation's active agent keys among ids, for
// pages that show a mandate's agents; a revoked key is left out.
func (s *Service) AgentNames(ctx context.Context, orgID string, ids []string) (map[string]string, error) {
	keys, err := s.store.ActiveAgentKeys(ctx, orgID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k.ID] = k.Name
	}
	return out, nil
}

// checkSumField refuses a sum budget over a field the action's schema
// does not declare at its top as a number: its type must be number or
// integer (or a list of only those). A property without a type, or an
// enum of strings, could hold anything, and a budget over it bounds
// nothing the granter can read.
func checkSumField(schema []byte, field string) error {
	var top struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &top)
	p, ok := top.Properties[field]
	if !ok {
		return apperr.Field(apperr.InvalidRequest, "budget.sum.field", "budget.sum.field %q is not a property the action's input schema declares", field)
	}
	numeric := func(t any) bool { return t == "number" || t == "integer" }
	other := func(t any) bool { return !numeric(t) }
	switch t := p.Type.(type) {
	case []any:
		if len(t) > 0 && !slices.ContainsFunc(t, other) {
			return nil
		}
	default:
		if numeric(t) {
			return nil
		}
	}
	return apperr.Field(apperr.InvalidRequest, "budget.sum.field",
		"budget.sum.field %q must be a number or integer in the action's input schema (its property's type), so each use has an amount to spend", field)
}

// mayGrant is who may grant mandates: owners and administrators, and
// every member where the organisation allows it.
func mayGrant(org *models.Organization, m *models.Member) bool {
	return m.Active && (m.Administers() || org.MembersMayGrantMandates)
}

// riskRank orders risks; a mandate covers risks up to its granter's
// ceiling.
var riskRank = map[string]int{models.RiskLow: 0, models.RiskMedium: 1, models.RiskHigh: 2, models.RiskCritical: 3}

// riskCeiling is the highest risk m's mandates cover: high for owners and
// administrators, medium for other members. A critical request is always
// decided by a person, one at a time.
func riskCeiling(m *models.Member) string {
	if m.Administers() {
		return models.RiskHigh
	}
	return models.RiskMedium
}

// authority says why granter could not decide approval a alone (the
// mandate standing for that one decision), or "" when they could: still
// allowed to grant, among its approvers in their own right (standing in
// for someone away lends the decision of one request, never a standing
// approval), one approval needed, no ethics concern asking for a written
// reason, and its risk within their ceiling. The one rule, at grant
// (API and page) and at every use.
func authority(org *models.Organization, granter *models.Member, a *approvals.Approval) string {
	away, standsIn := a.StandsInFor(granter.ID)
	switch {
	case !mayGrant(org, granter):
		return granter.DisplayName() + " may no longer grant mandates"
	case !slices.Contains(a.ApproverIDs, granter.ID):
		return granter.DisplayName() + " is not among its approvers"
	case standsIn:
		return fmt.Sprintf("%s is asked only in place of %s, who is away, and a delegation lends no standing approval", granter.DisplayName(), away.Name)
	case a.RequiredApprovals > 1:
		return fmt.Sprintf("it needs %d approvals (an organisation rule), and a mandate stands for one person's", a.RequiredApprovals)
	case len(a.Concerns.V) > 0:
		return "an ethics rule matched, so approving needs a written reason"
	case riskRank[a.Risk] > riskRank[riskCeiling(granter)]:
		return fmt.Sprintf("its risk is %s, above the %s a mandate of %s may cover", a.Risk, riskCeiling(granter), granter.DisplayName())
	}
	return ""
}

// grantable refuses a mandate for an action none of whose policy's
// approvals granter could decide alone, naming why for each, and one the
// organisation's unconditional approval rules make need more than one
// approval. Rules that depend on the input are weighed at each use.
func (s *Service) grantable(ctx context.Context, org *models.Organization, granter *models.Member, action *models.Action) error {
	stored, err := s.store.EnabledRules(ctx, org.ID)
	if err != nil {
		return err
	}
	for _, r := range stored {
		if r.Kind == rules.KindApproval && strings.TrimSpace(r.Condition) == "" && r.RequiredApprovals > 1 {
			return apperr.Field(apperr.Forbidden, "action", "the organisation rule %q makes every approval need %d approvals, and a mandate stands for one person's",
				r.Name, r.RequiredApprovals)
		}
	}
	outcomes, always := []models.PolicyRule{}, false
	for _, r := range action.Policy.V {
		if r.Outcome == rules.GateApproval {
			outcomes = append(outcomes, r)
		}
		always = always || strings.TrimSpace(r.Condition) == ""
	}
	if !always {
		outcomes = append(outcomes, noRuleMatched)
	}
	var why []string
	for _, r := range outcomes {
		approvers, via, err := s.approvals.Approvers(ctx, org, r.Approvers)
		if err != nil {
			why = append(why, fmt.Sprintf("%s names approvers who cannot be resolved", ruleName(r)))
			continue
		}
		risk := r.Risk
		if risk == "" {
			risk = models.RiskMedium
		}
		a := &approvals.Approval{ApproverIDs: approvers, ApproverVia: models.JSON[map[string][]models.Via]{V: via}, Risk: risk, RequiredApprovals: 1}
		reason := authority(org, granter, a)
		if reason == "" {
			return nil
		}
		why = append(why, ruleName(r)+": "+reason)
	}
	if len(why) == 0 {
		return apperr.Field(apperr.InvalidRequest, "action", "the policy of %s never asks a person, so a mandate would allow nothing", action.Name)
	}
	return apperr.Field(apperr.Forbidden, "action", "a mandate cannot stand for the approvals %s raises: %s", action.Name, strings.Join(why, "; "))
}

// ruleName names a policy rule in a refusal.
func ruleName(r models.PolicyRule) string {
	if r.Name == "" {
		return "when no rule holds, the owners and administrators decide, and"
	}
	return fmt.Sprintf("rule %q", r.Name)
}

// covering are the live mandates that may allow check p asks of action
// with input, in the order to spend them (soonest to expire first): those
// for p's agent key, whose condition holds, whose budget is not spent by
// this use, and whose granter could decide alone the approval the check
// would raise (approval). The budget is checked again under the
// mandate's lock when spent.
func (s *Service) covering(ctx context.Context, p models.Actor, action *models.Action, input []byte, approval *approvals.CreateInput) ([]spend, error) {
	if p.Key == nil || p.Key.Kind != models.KeyAgent {
		return nil, nil
	}
	live, err := s.store.LiveMandates(ctx, p.Organization.ID, action.Name)
	if err != nil || len(live) == 0 {
		return nil, err
	}
	var value any
	_ = json.Unmarshal(input, &value) // held to the schema already
	caller := callerOf(p)
	var preview *approvals.Approval
	var spends []spend
	for i := range live {
		m := &live[i]
		if len(m.Agents) > 0 && !slices.Contains(m.Agents, p.Key.ID) {
			continue
		}
		if !holds(m.Condition, value, caller) {
			continue
		}
		amount, ok := spendOf(m, value)
		if !ok || !m.Covers(m.Usage, amount) {
			continue
		}
		granter, err := s.store.GetMember(ctx, p.Organization.ID, m.GranterID)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if preview == nil {
			if preview, err = s.approvals.Preview(ctx, p, approval); err != nil {
				return nil, nil // the approval's create refuses the same, naming why
			}
		}
		if why := authority(p.Organization, granter, preview); why != "" {
			s.log.Info("mandate does not cover this check", "organization", p.Organization.ID, "mandate", m.ID, "why", why)
			continue
		}
		spends = append(spends, spend{mandateID: m.ID, amount: amount})
	}
	return spends, nil
}

// holds reports whether a mandate's condition holds for input and caller:
// an empty one always does, one that cannot be evaluated never (a person
// decides instead).
func holds(condition string, input any, caller map[string]string) bool {
	if condition == "" {
		return true
	}
	i, err := rules.FirstGateMatch([]string{condition}, input, caller)
	return err == nil && i == 0
}

// spendOf is what a use spends of m's sum budget: the input's field, a
// number not below zero; a field absent or of another kind is not
// covered (0 without a sum budget).
func spendOf(m *models.Mandate, input any) (float64, bool) {
	if m.BudgetSumField == nil {
		return 0, true
	}
	fields, _ := input.(map[string]any)
	n, ok := fields[*m.BudgetSumField].(float64)
	return n, ok && n >= 0
}

// Mandates lists mandates for who: an administrator (or an admin key) sees
// the organisation's, a member their own.
func (s *Service) Mandates(ctx context.Context, who models.Actor, f MandateFilter, p models.Page) ([]models.Mandate, string, error) {
	if err := mayRead(who, &f); err != nil {
		return nil, "", err
	}
	return s.store.ListMandates(ctx, who.Organization.ID, f, p)
}

// Mandate is one mandate who may see.
func (s *Service) Mandate(ctx context.Context, who models.Actor, id string) (*models.Mandate, error) {
	f := MandateFilter{}
	if err := mayRead(who, &f); err != nil {
		return nil, err
	}
	m, err := s.store.GetMandate(ctx, who.Organization.ID, id)
	if err != nil {
		return nil, err
	}
	if f.GranterID != "" && m.GranterID != f.GranterID {
		return nil, apperr.New(apperr.NotFound, "mandate %s not found", id)
	}
	return m, nil
}

// Revoke ends a mandate at once: the next check it would have allowed
// asks a person. Its granter, an administrator, or an admin key may.
func (s *Service) Revoke(ctx context.Context, who models.Actor, id string) (*models.Mandate, error) {
	if _, err := s.Mandate(ctx, who, id); err != nil {
		return nil, err
	}
	return s.revoke(ctx, who, who.Organization.ID, id)
}

// mayRead refuses agent keys and narrows a member who does not administer
// the organisation to their own mandates.
func mayRead(who models.Actor, f *MandateFilter) error {
	switch m := who.Member(); {
	case m != nil && !m.Administers():
		f.GranterID = m.ID
	case m != nil, who.Administrator:
	default:
		return apperr.New(apperr.Forbidden, "mandates belong to people: use a member token or an admin key")
	}
	return nil
}

// approvedBy reports whether granter approved a, settling it.
func approvedBy(a *approvals.Approval, granter *models.Member) bool {
	return a.Status == states.Approved && slices.Contains(a.ApprovedBy, granter.ID)
}
