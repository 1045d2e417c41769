package models

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/rules"
)

// NewRule is the input for CreateRule. Its tags check each field on its
// own; Check checks what each kind needs and compiles the condition.
type NewRule struct {
	Name              string   `json:"name" validate:"required,max=200"`
	Kind              string   `json:"kind" validate:"required,oneof=approval ethics restricted"`
	Condition         string   `json:"condition" validate:"max=4000"`
	RequiredApprovals int      `json:"requiredApprovals" validate:"omitempty,min=2,max=20"`
	Principle         string   `json:"principle" validate:"max=200"`
	Concern           string   `json:"concern" validate:"max=2000"`
	Fields            []string `json:"fields" validate:"max=100,dive,required,max=200"`
	Enabled           *bool    `json:"enabled"`
}

// Check requires what each kind needs and a condition that compiles to a
// bool, so a broken rule is refused when saved, not when a request comes.
// Every caller that saves a rule (the API, the admin pages) runs it after
// the tag validation.
func (in *NewRule) Check() error {
	switch in.Kind {
	case rules.KindApproval:
		if in.RequiredApprovals == 0 {
			return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "an approval rule needs requiredApprovals, from 2 to 20")
		}
	case rules.KindEthics:
		if in.Principle == "" {
			return apperr.Field(apperr.InvalidRequest, "principle", "an ethics rule needs the principle it protects")
		}
		if in.Concern == "" {
			return apperr.Field(apperr.InvalidRequest, "concern", "an ethics rule needs the concern approvers read first")
		}
	case rules.KindRestricted:
		if len(in.Fields) == 0 {
			return apperr.Field(apperr.InvalidRequest, "fields", "a restricted-fields rule needs the fields it hides")
		}
	}
	if in.Kind != rules.KindApproval && in.RequiredApprovals != 0 {
		return apperr.Field(apperr.InvalidRequest, "requiredApprovals", "requiredApprovals belongs to approval rules")
	}
	if in.Condition != "" {
		if err := rules.Check(in.Condition); err != nil {
			return apperr.Field(apperr.InvalidRequest, "condition", "%v", err)
		}
	}
	return nil
}

// CreateRule saves a rule, enabled unless said otherwise.
func (s *Store) CreateRule(ctx context.Context, orgID string, in NewRule) (*Rule, error) {
	now := Now()
	r := &Rule{ID: newID(ids.Rule), OrganizationID: orgID, Name: strings.TrimSpace(in.Name), Kind: in.Kind,
		Condition: in.Condition, RequiredApprovals: in.RequiredApprovals, Principle: in.Principle, Concern: in.Concern,
		Fields: append(StringList{}, in.Fields...), Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now, UpdatedAt: now}
	err := s.db.WithContext(ctx).Create(r).Error
	return r, duplicate(err, "name", "a rule named %q already exists", r.Name)
}

// ListRules pages through the organisation's rules.
func (s *Store) ListRules(ctx context.Context, orgID string, p Page) ([]Rule, string, error) {
	return list(s.db.WithContext(ctx).Where("organization_id = ?", orgID), p, func(r *Rule) string { return r.ID })
}

// EnabledRules returns the rules that apply to new requests, oldest first.
func (s *Store) EnabledRules(ctx context.Context, orgID string) ([]Rule, error) {
	var out []Rule
	err := s.db.WithContext(ctx).Where("organization_id = ? AND enabled", orgID).Order("id").Find(&out).Error
	return out, err
}

// SetRuleEnabled switches a rule on or off; requests already created keep
// what the rules gave them.
func (s *Store) SetRuleEnabled(ctx context.Context, orgID, id string, enabled bool) (*Rule, error) {
	var r *Rule
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = take[Rule](tx, orgID, id, "rule "+id); err != nil {
			return err
		}
		r.Enabled, r.UpdatedAt = enabled, Now()
		return tx.Save(r).Error
	})
	return r, err
}

// DeleteRule removes a rule.
func (s *Store) DeleteRule(ctx context.Context, orgID, id string) error {
	return remove[Rule](s.db.WithContext(ctx), orgID, id, "rule "+id)
}
