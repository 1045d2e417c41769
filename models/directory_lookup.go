package models

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// Directory holds the people and teams a list of references might name:
// members and guests by id or email, teams by id or name. The rules that
// turn references into recipients live in package requests.
type Directory struct {
	members []Member
	guests  []Guest
	teams   []Team
}

// LookUp loads the organisation's members, guests and teams (with their
// members) that any of refs might name, in three queries.
func (s *Store) LookUp(ctx context.Context, orgID string, refs []string) (*Directory, error) {
	db := s.db.WithContext(ctx)
	emails := []string{""} // keeps the IN lists non-empty
	names := []string{""}
	for _, r := range refs {
		emails = append(emails, NormalizeEmail(r))
		names = append(names, strings.TrimSpace(r))
	}
	d := &Directory{}
	if err := db.Where("organization_id = ? AND (id IN ? OR email IN ?)", orgID, names, emails).Find(&d.members).Error; err != nil {
		return nil, err
	}
	if err := db.Where("organization_id = ? AND (id IN ? OR email IN ?)", orgID, names, emails).Find(&d.guests).Error; err != nil {
		return nil, err
	}
	err := db.Preload("Members", func(db *gorm.DB) *gorm.DB { return db.Order("members.id") }).
		Where("organization_id = ? AND (id IN ? OR name IN ?)", orgID, names, names).Find(&d.teams).Error
	return d, err
}

// Member is the member ref names by id or email, or nil.
func (d *Directory) Member(ref string) *Member {
	for i, m := range d.members {
		if (ids.HasPrefix(ref, ids.Member) && m.ID == ref) || m.Email == NormalizeEmail(ref) {
			return &d.members[i]
		}
	}
	return nil
}

// Guest is the guest ref names by id or email, or nil.
func (d *Directory) Guest(ref string) *Guest {
	for i, g := range d.guests {
		if (ids.HasPrefix(ref, ids.Guest) && g.ID == ref) || g.Email == NormalizeEmail(ref) {
			return &d.guests[i]
		}
	}
	return nil
}

// Team is the team, group or workspace ref names by id or name, or nil.
func (d *Directory) Team(ref string) *Team {
	for i, t := range d.teams {
		if t.ID == ref || t.Name == strings.TrimSpace(ref) {
			return &d.teams[i]
		}
	}
	return nil
}

// ActiveMemberIDs lists the ids of the organisation's active members in
// order; roles, when given, keeps only those roles.
func (s *Store) ActiveMemberIDs(ctx context.Context, orgID string, roles ...string) ([]string, error) {
	q := s.db.WithContext(ctx).Model(&Member{}).Where("organization_id = ? AND active", orgID)
	if len(roles) > 0 {
		q = q.Where("role IN ?", roles)
	}
	var out []string
	err := q.Order("id").Pluck("id", &out).Error
	return out, err
}
