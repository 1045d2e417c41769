package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// NewRule is an organisation rule to save. Its tags check each field on
// its own; Check checks what each kind needs and compiles the condition.
type NewRule struct {
	Name              string `json:"name" validate:"required,max=200"`
	Kind              string `json:"kind" validate:"required,oneof=approval ethics restricted sharing"`
	Condition         string `json:"condition" validate:"max=4000"`
	RequiredApprovals int    `json:"requiredApprovals" validate:"omitempty,min=2,max=20"`
	// Escalation is an approval rule's, read as a request's escalation is.
	Escalation *approvals.Escalation `json:"escalation" nullable:"true"`
	Principle  string                `json:"principle" validate:"max=200"`
	Concern    string                `json:"concern" validate:"max=2000"`
	Fields     []string              `json:"fields" validate:"max=100,dive,required,max=200"`
	Enabled    *bool                 `json:"enabled"`
}

// Check requires what each kind needs and a condition that compiles to a
// bool, so a broken rule is refused when saved, not when a request comes.
// CreateRule runs it after the tags.
func (in *NewRule) Check() error {
	switch in.Kind {
	case rules.KindApproval:
		if in.RequiredApprovals == 0 && in.Escalation == nil {
			return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "an approval rule needs requiredApprovals, from 2 to 20")
		}
		if in.Escalation != nil {
			if _, err := requests.Duration("escalation.after", in.Escalation.After); err != nil {
				return err
			}
		}
	case rules.KindEthics:
		if strings.EqualFold(strings.TrimSpace(in.Name), models.ScreenRule) {
			return apperr.Field(apperr.InvalidRequest, "name", "%q names the concerns the model screen raises; give the rule another name", models.ScreenRule)
		}
		if in.Principle == "" {
			return apperr.Field(apperr.InvalidRequest, "principle", "an ethics rule needs the principle it protects")
		}
		if in.Concern == "" {
			return apperr.Field(apperr.InvalidRequest, "concern", "an ethics rule needs the concern approvers read first")
		}
	case rules.KindSharing:
		if in.Condition == "" {
			return apperr.Field(apperr.InvalidRequest, "condition", "a sharing rule needs the condition (over report and grant) of the grants it forbids")
		}
	case rules.KindRestricted:
		if len(in.Fields) == 0 {
			return apperr.Field(apperr.InvalidRequest, "fields", "a restricted-fields rule needs the fields it hides")
		}
		for i, f := range in.Fields {
			if err := rules.CheckRestrictedField(f); err != nil {
				return apperr.Field(apperr.InvalidRequest, fmt.Sprintf("fields[%d]", i), "%v", err)
			}
		}
	}
	if in.Kind != rules.KindApproval && in.RequiredApprovals != 0 {
		return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "requiredApprovals belongs to approval rules")
	}
	if in.Kind != rules.KindApproval && in.Escalation != nil {
		return apperr.Field(apperr.InvalidRequest, "escalation", "escalation belongs to approval rules")
	}
	if in.Condition != "" {
		if err := rules.Check(in.Kind, in.Condition); err != nil {
			return apperr.Field(apperr.InvalidRequest, "condition", "%v", err)
		}
	}
	return nil
}

// CreateRule saves a rule, enabled unless in says otherwise, after its
// tags and Check.
func (s *Service) CreateRule(ctx context.Context, orgID string, in NewRule) (*models.Rule, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	if err := in.Check(); err != nil {
		return nil, err
	}
	r := &models.Rule{OrganizationID: orgID, Name: strings.TrimSpace(in.Name), Kind: in.Kind, Condition: in.Condition,
		RequiredApprovals: in.RequiredApprovals, Principle: in.Principle, Concern: in.Concern,
		Fields: append(models.StringList{}, in.Fields...), Enabled: in.Enabled == nil || *in.Enabled}
	if in.Escalation != nil {
		after, _ := requests.Duration("escalation.after", in.Escalation.After) // checked above
		r.EscalationAfter, r.EscalationTo = int(after/time.Second), in.Escalation.To
	}
	if err := s.store.Directory().CreateRule(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ListRules pages through the organisation's rules.
func (s *Service) ListRules(ctx context.Context, orgID string, p models.Page) ([]models.Rule, string, error) {
	return s.store.Directory().ListRules(ctx, orgID, p)
}

// SetRuleEnabled switches a rule on or off; requests already made keep
// what the rules gave them.
func (s *Service) SetRuleEnabled(ctx context.Context, orgID, id string, enabled bool) (*models.Rule, error) {
	return s.store.Directory().SetRuleEnabled(ctx, orgID, id, enabled)
}

// DeleteRule removes a rule.
func (s *Service) DeleteRule(ctx context.Context, orgID, id string) error {
	return s.store.Directory().DeleteRule(ctx, orgID, id)
}
