package models

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
)

// Everyone is the approver reference for every active member.
const Everyone = "everyone"

// ResolveApprovers turns approver references into the ids of the people who
// may decide (spec 2.1 rules 1–3): members by email or id, teams, groups and
// workspaces by name or id (expanded now, once), `everyone`, and admitted
// guests when the organisation lets guests approve. No references means the
// owners and administrators.
func (s *Store) ResolveApprovers(ctx context.Context, org *Organization, refs []string) ([]string, error) {
	db := s.db.WithContext(ctx)
	if len(refs) == 0 {
		var owners []Member
		err := db.Where("organization_id = ? AND active AND role IN ?", org.ID, []string{RoleOwner, RoleAdmin}).Order("id").Find(&owners).Error
		return memberIDs(owners), err
	}
	d, err := loadDirectory(db, org.ID, refs)
	if err != nil {
		return nil, err
	}
	var out, unknown []string
	add := func(ids ...string) {
		for _, id := range ids {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	for i, ref := range refs {
		ref = strings.TrimSpace(ref)
		if ref == Everyone {
			var all []Member
			if err := db.Where("organization_id = ? AND active", org.ID).Order("id").Find(&all).Error; err != nil {
				return nil, err
			}
			add(memberIDs(all)...)
			continue
		}
		member, guest, team := d.member(ref), d.guest(ref), d.team(ref)
		if (member != nil || guest != nil) && team != nil {
			person := "member " + ref
			if member != nil {
				person = fmt.Sprintf("member %s (%s)", member.Email, member.ID)
			} else if guest != nil {
				person = fmt.Sprintf("guest %s (%s)", guest.Email, guest.ID)
			}
			e := apperr.Field(apperr.AmbiguousApprover, fmt.Sprintf("approvers[%d]", i),
				"%q names both a person and a %s; use an id to say which", ref, team.Kind)
			e.Candidates = []string{person, fmt.Sprintf("%s %s (%s)", team.Kind, team.Name, team.ID)}
			return nil, e
		}
		switch {
		case member != nil && !member.Active:
			unknown = append(unknown, ref+" (inactive)")
		case member != nil:
			add(member.ID)
		case guest != nil && !org.GuestsMayApprove:
			unknown = append(unknown, ref+" (a guest; this organisation does not let guests approve)")
		case guest != nil:
			add(guest.ID)
		case team != nil:
			active := slices.DeleteFunc(slices.Clone(team.Members), func(m Member) bool { return !m.Active })
			if len(active) == 0 {
				unknown = append(unknown, ref+" (a "+team.Kind+" with no active members)")
			}
			add(memberIDs(active)...)
		default:
			unknown = append(unknown, ref)
		}
	}
	if len(unknown) > 0 {
		e := apperr.Field(apperr.UnknownApprover, "approvers", "not an active member or admitted guest: %s", strings.Join(unknown, "; "))
		return nil, e
	}
	return out, nil
}

// directory holds the people and teams a list of references might name.
type directory struct {
	members []Member
	guests  []Guest
	teams   []Team
}

func loadDirectory(db *gorm.DB, orgID string, refs []string) (*directory, error) {
	emails := []string{""} // keeps the IN lists non-empty
	names := []string{""}
	for _, r := range refs {
		emails = append(emails, NormalizeEmail(r))
		names = append(names, strings.TrimSpace(r))
	}
	d := &directory{}
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

func (d *directory) member(ref string) *Member {
	for i, m := range d.members {
		if (ids.HasPrefix(ref, ids.Member) && m.ID == ref) || m.Email == NormalizeEmail(ref) {
			return &d.members[i]
		}
	}
	return nil
}

func (d *directory) guest(ref string) *Guest {
	for i, g := range d.guests {
		if (ids.HasPrefix(ref, ids.Guest) && g.ID == ref) || g.Email == NormalizeEmail(ref) {
			return &d.guests[i]
		}
	}
	return nil
}

func (d *directory) team(ref string) *Team {
	for i, t := range d.teams {
		if t.ID == ref || t.Name == strings.TrimSpace(ref) {
			return &d.teams[i]
		}
	}
	return nil
}

func memberIDs(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
