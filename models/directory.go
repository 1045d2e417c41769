package models

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/ids"
)

// The directory's writes take checked input: package admin validates what
// an administrator asks for, and the rules that need a transaction (the
// last owner, a member's or guest's address, a team's members) are here.

// CreateOrganization makes a new tenant on the free plan unless told.
func (s *DirectoryStore) CreateOrganization(ctx context.Context, name, plan string) (*Organization, error) {
	org := &Organization{ID: newID(ids.Organization), Name: name, Plan: plan,
		MaxApprovalExpirySeconds: int64(DefaultMaxApprovalExpiry.Seconds())}
	if org.Plan == "" {
		org.Plan = PlanFree
	}
	return org, s.db.WithContext(ctx).Create(org).Error
}

// GetOrganization reads one organisation.
func (s *DirectoryStore) GetOrganization(ctx context.Context, id string) (*Organization, error) {
	var org Organization
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&org).Error
	return &org, notFound(err, "organization")
}

// ListOrganizations lists every organisation (operator use only).
func (s *DirectoryStore) ListOrganizations(ctx context.Context) ([]Organization, error) {
	var orgs []Organization
	return orgs, s.db.WithContext(ctx).Order("id").Find(&orgs).Error
}

// OrganizationChange is the settings of an organisation to change; nil
// ones stay.
type OrganizationChange struct {
	Name, Plan               *string
	GuestsMayApprove         *bool
	MaxApprovalExpirySeconds *int64
	DecisionTokenTTLSeconds  *int64
	ReportOrigins            *StringList
	MembersMayGrantMandates  *bool
}

// UpdateOrganization changes the settings given; nil ones stay.
func (s *DirectoryStore) UpdateOrganization(ctx context.Context, id string, ch OrganizationChange) (*Organization, error) {
	org, err := s.GetOrganization(ctx, id)
	if err != nil {
		return nil, err
	}
	set(&org.Name, ch.Name)
	set(&org.Plan, ch.Plan)
	set(&org.GuestsMayApprove, ch.GuestsMayApprove)
	set(&org.MaxApprovalExpirySeconds, ch.MaxApprovalExpirySeconds)
	set(&org.DecisionTokenTTLSeconds, ch.DecisionTokenTTLSeconds)
	set(&org.ReportOrigins, ch.ReportOrigins)
	set(&org.MembersMayGrantMandates, ch.MembersMayGrantMandates)
	return org, s.db.WithContext(ctx).Save(org).Error
}

// set sets *field to *value when value is not nil.
func set[T any](field *T, value *T) {
	if value != nil {
		*field = *value
	}
}

// NormalizeEmail is the one spelling of an address the service stores.
func NormalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// CreateMember adds an active person to the organisation, as a member
// unless role says otherwise, in ctx's transaction when it has one; an
// address already a member's is ErrDuplicate. Whether the address may
// become a member is the admin service's to decide.
func (s *DirectoryStore) CreateMember(ctx context.Context, orgID, email, name, role string) (*Member, error) {
	m := &Member{ID: newID(ids.Member), OrganizationID: orgID, Email: NormalizeEmail(email),
		Name: strings.TrimSpace(name), Role: role, Active: true}
	if m.Role == "" {
		m.Role = RoleMember
	}
	return m, duplicateOf(s.conn(ctx).Create(m).Error)
}

// IsMember reports whether the organisation has a member with email.
func (s *DirectoryStore) IsMember(ctx context.Context, orgID, email string) (bool, error) {
	var n int64
	err := s.conn(ctx).Model(&Member{}).Where("organization_id = ? AND email = ?", orgID, NormalizeEmail(email)).Count(&n).Error
	return n > 0, err
}

// GetMember reads one member of the organisation.
func (s *DirectoryStore) GetMember(ctx context.Context, orgID, id string) (*Member, error) {
	return take[Member](s.db.WithContext(ctx), orgID, id, "member")
}

// ListMembers pages through the organisation's members, newest first.
func (s *DirectoryStore) ListMembers(ctx context.Context, orgID string, p Page) ([]Member, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	return list(q, p, ids.Member, func(m *Member) string { return m.ID })
}

// LockMember reads the organisation's member id under its row lock, for
// the rest of ctx's transaction.
func (s *DirectoryStore) LockMember(ctx context.Context, orgID, id string) (*Member, error) {
	return lockedIn[Member](ctx, orgID, id, "member")
}

// ActiveOwners counts the organisation's active owners but exceptID, in
// ctx's transaction.
func (s *DirectoryStore) ActiveOwners(ctx context.Context, orgID, exceptID string) (int64, error) {
	var n int64
	err := s.conn(ctx).Model(&Member{}).Where("organization_id = ? AND role = ? AND active = ? AND id <> ?",
		orgID, RoleOwner, true, exceptID).Count(&n).Error
	return n, err
}

// SaveMember writes m in ctx's transaction; a deactivated member's browser
// push subscriptions go with it, so their browsers are told nothing more.
func (s *DirectoryStore) SaveMember(ctx context.Context, m *Member) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if !m.Active {
		if err := st.tx.Where("organization_id = ? AND person_id = ?", m.OrganizationID, m.ID).Delete(&PushSubscription{}).Error; err != nil {
			return err
		}
	}
	return st.tx.Save(m).Error
}

// lockForUpdate locks selected rows on PostgreSQL; SQLite's IMMEDIATE
// transactions already serialise writers.
func lockForUpdate(tx *gorm.DB) []clause.Expression {
	if tx.Dialector.Name() == "postgres" {
		return []clause.Expression{clause.Locking{Strength: "UPDATE"}}
	}
	return nil
}

// CreateTeam makes a named set of members, in ctx's transaction when it
// has one; a name already taken is ErrDuplicate.
func (s *DirectoryStore) CreateTeam(ctx context.Context, orgID, name, kind string, members []Member) (*Team, error) {
	t := &Team{ID: newID(ids.Team), OrganizationID: orgID, Name: strings.TrimSpace(name), Kind: kind, Members: members}
	return t, duplicateOf(s.conn(ctx).Create(t).Error)
}

// LockTeam reads the organisation's team id under its row lock, for the
// rest of ctx's transaction.
func (s *DirectoryStore) LockTeam(ctx context.Context, orgID, id string) (*Team, error) {
	return lockedIn[Team](ctx, orgID, id, "team "+id)
}

// SaveTeam writes t's name, and its members when members is not nil (else
// it reads them into t), in ctx's transaction; a name already taken is
// ErrDuplicate.
func (s *DirectoryStore) SaveTeam(ctx context.Context, t *Team, members *[]Member) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	t.UpdatedAt = Now()
	if err := duplicateOf(st.tx.Omit("Members").Save(t).Error); err != nil {
		return err
	}
	if members == nil {
		return st.tx.Model(t).Order("members.id").Association("Members").Find(&t.Members)
	}
	t.Members = *members
	return st.tx.Model(t).Association("Members").Replace(*members)
}

// DeleteTeam removes a team and its membership list; requests that named
// it keep the people it stood for.
func (s *DirectoryStore) DeleteTeam(ctx context.Context, orgID, id string) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		t, err := take[Team](tx, orgID, id, "team "+id)
		if err != nil {
			return err
		}
		if err := tx.Model(t).Association("Members").Clear(); err != nil {
			return err
		}
		return tx.Delete(t).Error
	})
}

// FindMembers finds each reference (a member id or an email) among the
// organisation's members: those found, in the order referred to and each
// once, and the references that name nobody.
func (s *DirectoryStore) FindMembers(ctx context.Context, orgID string, refs []string) (found []Member, unknown []string, err error) {
	if len(refs) == 0 {
		return []Member{}, nil, nil
	}
	var idRefs, emailRefs []string
	for _, r := range refs {
		if ids.HasPrefix(r, ids.Member) {
			idRefs = append(idRefs, r)
		} else {
			emailRefs = append(emailRefs, NormalizeEmail(r))
		}
	}
	var rows []Member
	// The "" entries keep both IN lists non-empty, which SQL requires.
	if err := s.conn(ctx).Where("organization_id = ? AND (id IN ? OR email IN ?)", orgID,
		append(idRefs, ""), append(emailRefs, "")).Find(&rows).Error; err != nil {
		return nil, nil, err
	}
	found = []Member{}
	seen := map[string]bool{}
	for _, r := range refs {
		i := slices.IndexFunc(rows, func(m Member) bool { return m.ID == r || m.Email == NormalizeEmail(r) })
		if i < 0 {
			unknown = append(unknown, r)
			continue
		}
		if !seen[rows[i].ID] {
			seen[rows[i].ID] = true
			found = append(found, rows[i])
		}
	}
	return found, unknown, nil
}

// ListTeams pages through teams, groups and workspaces with their members.
func (s *DirectoryStore) ListTeams(ctx context.Context, orgID string, p Page) ([]Team, string, error) {
	q := s.db.WithContext(ctx).Preload("Members", func(db *gorm.DB) *gorm.DB { return db.Order("members.id") }).
		Where("organization_id = ?", orgID)
	return list(q, p, ids.Team, func(t *Team) string { return t.ID })
}

// CreateGuest admits an address, in ctx's transaction when it has one.
// Admitting the same address again returns the existing guest with
// created false. Whether the address may be a guest is the admin
// service's to decide.
func (s *DirectoryStore) CreateGuest(ctx context.Context, orgID, email, name string) (g *Guest, created bool, err error) {
	g = &Guest{ID: newID(ids.Guest), OrganizationID: orgID, Email: NormalizeEmail(email), Name: strings.TrimSpace(name)}
	db := s.conn(ctx)
	var existing Guest
	err = db.Where("organization_id = ? AND email = ?", orgID, g.Email).Take(&existing).Error
	if err == nil {
		return &existing, false, nil
	}
	if err != gorm.ErrRecordNotFound {
		return nil, false, err
	}
	return g, true, duplicateOf(db.Create(g).Error)
}

// ListGuests pages through admitted guests.
func (s *DirectoryStore) ListGuests(ctx context.Context, orgID string, p Page) ([]Guest, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	return list(q, p, ids.Guest, func(g *Guest) string { return g.ID })
}

// UpdateGuest renames a guest (nil leaves the name). The address is who
// the guest is, so it does not change: admit the new address instead.
// Requests already made name the guest by id and are unchanged.
func (s *DirectoryStore) UpdateGuest(ctx context.Context, orgID, id string, name *string) (*Guest, error) {
	var g *Guest
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if g, err = take[Guest](tx.Clauses(lockForUpdate(tx)...), orgID, id, "guest "+id); err != nil {
			return err
		}
		if name == nil {
			return nil
		}
		g.Name = strings.TrimSpace(*name)
		return tx.Save(g).Error
	})
	return g, err
}

// GuestByEmail finds the organisation's guest admitted with email.
func (s *DirectoryStore) GuestByEmail(ctx context.Context, orgID, email string) (*Guest, error) {
	var g Guest
	err := s.conn(ctx).Where("organization_id = ? AND email = ?", orgID, NormalizeEmail(email)).Take(&g).Error
	return &g, notFound(err, "guest "+NormalizeEmail(email))
}

// LockGuest reads one of the organisation's guests under its row lock,
// for the rest of ctx's transaction.
func (s *DirectoryStore) LockGuest(ctx context.Context, orgID, id string) (*Guest, error) {
	return lockedIn[Guest](ctx, orgID, id, "guest "+id)
}

// DeleteGuest deletes a guest with, in ctx's transaction, their sessions,
// push subscriptions, sign-in links and decision links: from then on they
// can neither sign in nor decide, and nothing new can name them. The
// address may be admitted again later, as a new guest.
func (s *DirectoryStore) DeleteGuest(ctx context.Context, g *Guest) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if err := endSignIns(st.tx, g.OrganizationID, g.ID); err != nil {
		return err
	}
	if err := deleteDecisionLinks(st.tx, g.OrganizationID, g.ID); err != nil {
		return err
	}
	return st.tx.Delete(g).Error
}
