package models

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
)

// Directory holds the people and teams a list of references might name:
// members and guests by id, email or display name, teams by id or name
// (names in any case). The rules that turn references into recipients
// live in package requests.
type Directory struct {
	members []Member
	guests  []Guest
	teams   []Team
}

// LookUp loads the organisation's members, guests and teams that any of
// refs might name in one query, and the members of the teams found in a
// second, only when it found any: resolving who a request asks is on
// every create's path.
func (s *DirectoryStore) LookUp(ctx context.Context, orgID string, refs []string) (*Directory, error) {
	db := s.db.WithContext(ctx)
	idList := []string{""} // keeps the IN lists non-empty
	lower := []string{""}
	for _, r := range refs {
		idList = append(idList, strings.TrimSpace(r))
		lower = append(lower, foldName(r))
	}
	named := "organization_id = ? AND (id IN ? OR email IN ? OR LOWER(name) IN ?)"
	rows, err := db.Raw("SELECT 'member' AS source, id, email, name, role, active, '' AS kind FROM members WHERE "+named+
		" UNION ALL SELECT 'guest', id, email, name, '', TRUE, '' FROM guests WHERE "+named+
		" UNION ALL SELECT 'team', id, '', name, '', TRUE, kind FROM teams WHERE organization_id = ? AND (id IN ? OR LOWER(name) IN ?)"+
		" ORDER BY source, id",
		orgID, idList, lower, lower, orgID, idList, lower, lower, orgID, idList, lower).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := &Directory{}
	for rows.Next() {
		var source, id, email, name, role, kind string
		var active bool
		if err := rows.Scan(&source, &id, &email, &name, &role, &active, &kind); err != nil {
			return nil, err
		}
		switch source {
		case "member":
			d.members = append(d.members, Member{ID: id, OrganizationID: orgID, Email: email, Name: name, Role: role, Active: active})
		case "guest":
			d.guests = append(d.guests, Guest{ID: id, OrganizationID: orgID, Email: email, Name: name})
		default:
			d.teams = append(d.teams, Team{ID: id, OrganizationID: orgID, Name: name, Kind: kind})
		}
	}
	if err := rows.Err(); err != nil || len(d.teams) == 0 {
		return d, err
	}
	return d, teamMembers(db, d.teams)
}

// teamMembers fills in the members of teams, in id order.
func teamMembers(db *gorm.DB, teams []Team) error {
	byID := make(map[string]*Team, len(teams))
	teamIDs := make([]string, len(teams))
	for i := range teams {
		byID[teams[i].ID], teamIDs[i] = &teams[i], teams[i].ID
	}
	var rows []struct {
		TeamID string
		Member Member `gorm:"embedded"`
	}
	members, err := qualified(db, &Member{}, "members")
	if err != nil {
		return err
	}
	err = db.Table("team_members").Select("team_members.team_id, "+members).
		Joins("JOIN members ON members.id = team_members.member_id").
		Where("team_members.team_id IN ?", teamIDs).Order("members.id").Find(&rows).Error
	for _, r := range rows {
		t := byID[r.TeamID]
		t.Members = append(t.Members, r.Member)
	}
	return err
}

// qualified is model's columns, each named with table (QueryFields in
// Open, for a select that joins).
func qualified(db *gorm.DB, model any, table string) (string, error) {
	stmt := &gorm.Statement{DB: db}
	if err := stmt.Parse(model); err != nil {
		return "", err
	}
	cols := make([]string, len(stmt.Schema.DBNames))
	for i, c := range stmt.Schema.DBNames {
		cols[i] = table + "." + c
	}
	return strings.Join(cols, ", "), nil
}

// foldName is a reference as names are compared: trimmed, one space
// between words, lower case. Emails are stored lower case, so it folds
// them too.
func foldName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Members are the members ref names: by id or email, or, when active, by
// display name.
func (d *Directory) Members(ref string) []*Member {
	var out []*Member
	for i, m := range d.members {
		if (ids.HasPrefix(ref, ids.Member) && m.ID == ref) || m.Email == NormalizeEmail(ref) ||
			(m.Active && m.Name != "" && foldName(m.Name) == foldName(ref)) {
			out = append(out, &d.members[i])
		}
	}
	return out
}

// Guests are the guests ref names by id, email or display name.
func (d *Directory) Guests(ref string) []*Guest {
	var out []*Guest
	for i, g := range d.guests {
		if (ids.HasPrefix(ref, ids.Guest) && g.ID == ref) || g.Email == NormalizeEmail(ref) ||
			(g.Name != "" && foldName(g.Name) == foldName(ref)) {
			out = append(out, &d.guests[i])
		}
	}
	return out
}

// Teams are the teams, groups and workspaces ref names by id or name.
func (d *Directory) Teams(ref string) []*Team {
	var out []*Team
	for i, t := range d.teams {
		if t.ID == strings.TrimSpace(ref) || foldName(t.Name) == foldName(ref) {
			out = append(out, &d.teams[i])
		}
	}
	return out
}

// Entry is someone or something of the directory a reference could have
// meant, offered as a candidate when it matched nothing.
type Entry struct {
	Kind  string // ApproverMember, ApproverGuest or a team kind
	ID    string
	Name  string
	Email string
}

// Entries lists the organisation's active members, guests and teams,
// for suggesting what a reference that matched nothing meant.
func (s *DirectoryStore) Entries(ctx context.Context, orgID string) ([]Entry, error) {
	db := s.db.WithContext(ctx)
	var members []Member
	if err := db.Where("organization_id = ? AND active", orgID).Order("id").Find(&members).Error; err != nil {
		return nil, err
	}
	var guests []Guest
	if err := db.Where("organization_id = ?", orgID).Order("id").Find(&guests).Error; err != nil {
		return nil, err
	}
	var teams []Team
	if err := db.Where("organization_id = ?", orgID).Order("id").Find(&teams).Error; err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(members)+len(guests)+len(teams))
	for _, m := range members {
		out = append(out, Entry{Kind: ApproverMember, ID: m.ID, Name: m.Name, Email: m.Email})
	}
	for _, g := range guests {
		out = append(out, Entry{Kind: ApproverGuest, ID: g.ID, Name: g.Name, Email: g.Email})
	}
	for _, t := range teams {
		out = append(out, Entry{Kind: t.Kind, ID: t.ID, Name: t.Name})
	}
	return out, nil
}

// ActiveMemberIDs lists the ids of the organisation's active members in
// order; roles, when given, keeps only those roles.
func (s *DirectoryStore) ActiveMemberIDs(ctx context.Context, orgID string, roles ...string) ([]string, error) {
	q := s.db.WithContext(ctx).Model(&Member{}).Where("organization_id = ? AND active", orgID)
	if len(roles) > 0 {
		q = q.Where("role IN ?", roles)
	}
	var out []string
	err := q.Order("id").Pluck("id", &out).Error
	return out, err
}

// ActiveMembers lists the organisation's active members in id order;
// roles, when given, keeps only those roles.
func (s *DirectoryStore) ActiveMembers(ctx context.Context, orgID string, roles ...string) ([]PersonRef, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ? AND active", orgID)
	if len(roles) > 0 {
		q = q.Where("role IN ?", roles)
	}
	var members []Member
	if err := q.Order("id").Find(&members).Error; err != nil {
		return nil, err
	}
	out := make([]PersonRef, len(members))
	for i, m := range members {
		out[i] = PersonRef{ID: m.ID, Name: m.Name, Email: m.Email, Kind: ApproverMember}
	}
	return out, nil
}
