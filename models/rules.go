package models

import (
	"context"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// CreateRule saves r, built and checked by package admin, as a new rule.
func (s *DirectoryStore) CreateRule(ctx context.Context, r *Rule) error {
	r.ID = newID(ids.Rule)
	r.CreatedAt = Now()
	r.UpdatedAt = r.CreatedAt
	err := s.db.WithContext(ctx).Create(r).Error
	return duplicate(err, "name", "a rule named %q already exists", r.Name)
}

// ListRules pages through the organisation's rules.
func (s *DirectoryStore) ListRules(ctx context.Context, orgID string, p Page) ([]Rule, string, error) {
	return list(s.db.WithContext(ctx).Where("organization_id = ?", orgID), p, ids.Rule, func(r *Rule) string { return r.ID })
}

// EnabledRules returns the rules that apply to new requests, oldest first
// (from the process's copy under SeenSettings; the caller must not change
// them).
func (s *DirectoryStore) EnabledRules(ctx context.Context, orgID string) ([]Rule, error) {
	return s.settings.rules.get(ctx, orgID, func() ([]Rule, error) {
		var out []Rule
		err := s.db.WithContext(ctx).Where("organization_id = ? AND enabled", orgID).Order("id").Find(&out).Error
		return out, err
	})
}

// SetRuleEnabled switches a rule on or off; requests already created keep
// what the rules gave them.
func (s *DirectoryStore) SetRuleEnabled(ctx context.Context, orgID, id string, enabled bool) (*Rule, error) {
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
func (s *DirectoryStore) DeleteRule(ctx context.Context, orgID, id string) error {
	return remove[Rule](s.db.WithContext(ctx), orgID, id, "rule "+id)
}
