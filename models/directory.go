package models

import (
	"context"
	"slices"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
)

// NewOrganization is the input for CreateOrganization.
type NewOrganization struct {
	Name string `json:"name" validate:"required,max=200"`
	Plan string `json:"plan" validate:"omitempty,oneof=free team enterprise"`
}

// OrganizationPatch changes organisation settings; nil fields stay.
type OrganizationPatch struct {
	Name             *string `json:"name" validate:"omitempty,min=1,max=200"`
	Plan             *string `json:"plan" validate:"omitempty,oneof=free team enterprise"`
	GuestsMayApprove *bool   `json:"guestsMayApprove"`
	// MaxApprovalExpirySeconds bounds how long a request may wait; it is
	// also the expiry of a request created without one.
	MaxApprovalExpirySeconds *int64 `json:"maxApprovalExpirySeconds" validate:"omitempty,min=60,max=31536000"`
}

// CreateOrganization makes a new tenant on the free plan unless told.
func (s *Store) CreateOrganization(ctx context.Context, in NewOrganization) (*Organization, error) {
	org := &Organization{ID: newID(ids.Organization), Name: in.Name, Plan: in.Plan,
		MaxApprovalExpirySeconds: int64(DefaultMaxApprovalExpiry.Seconds())}
	if org.Plan == "" {
		org.Plan = PlanFree
	}
	return org, s.db.WithContext(ctx).Create(org).Error
}

// GetOrganization reads one organisation.
func (s *Store) GetOrganization(ctx context.Context, id string) (*Organization, error) {
	var org Organization
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&org).Error
	return &org, notFound(err, "organization")
}

// ListOrganizations lists every organisation (operator use only).
func (s *Store) ListOrganizations(ctx context.Context) ([]Organization, error) {
	var orgs []Organization
	return orgs, s.db.WithContext(ctx).Order("id").Find(&orgs).Error
}

// UpdateOrganization applies a patch.
func (s *Store) UpdateOrganization(ctx context.Context, id string, p OrganizationPatch) (*Organization, error) {
	org, err := s.GetOrganization(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.Name != nil {
		org.Name = *p.Name
	}
	if p.Plan != nil {
		org.Plan = *p.Plan
	}
	if p.GuestsMayApprove != nil {
		org.GuestsMayApprove = *p.GuestsMayApprove
	}
	if p.MaxApprovalExpirySeconds != nil {
		org.MaxApprovalExpirySeconds = *p.MaxApprovalExpirySeconds
	}
	return org, s.db.WithContext(ctx).Save(org).Error
}

// NewMember is the input for CreateMember.
type NewMember struct {
	Email string `json:"email" validate:"required,email,max=320"`
	Name  string `json:"name" validate:"max=200"`
	Role  string `json:"role" validate:"omitempty,oneof=owner admin member"`
}

// MemberPatch changes a member; nil fields stay.
type MemberPatch struct {
	Name   *string `json:"name" validate:"omitempty,max=200"`
	Role   *string `json:"role" validate:"omitempty,oneof=owner admin member"`
	Active *bool   `json:"active"`
}

// NormalizeEmail is the one spelling of an address the service stores.
func NormalizeEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// CreateMember adds an active person to the organisation.
func (s *Store) CreateMember(ctx context.Context, orgID string, in NewMember) (*Member, error) {
	m := &Member{ID: newID(ids.Member), OrganizationID: orgID, Email: NormalizeEmail(in.Email),
		Name: strings.TrimSpace(in.Name), Role: in.Role, Active: true}
	if m.Role == "" {
		m.Role = RoleMember
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var guests int64
		if err := tx.Model(&Guest{}).Where("organization_id = ? AND email = ?", orgID, m.Email).Count(&guests).Error; err != nil {
			return err
		}
		if guests > 0 {
			return apperr.Field(apperr.Conflict, "email", "%s is already admitted as a guest", m.Email)
		}
		return duplicate(tx.Create(m).Error, "email", "a member with email %s already exists", m.Email)
	})
	return m, err
}

// GetMember reads one member of the organisation.
func (s *Store) GetMember(ctx context.Context, orgID, id string) (*Member, error) {
	return take[Member](s.db.WithContext(ctx), orgID, id, "member")
}

// ListMembers pages through the organisation's members, newest first.
func (s *Store) ListMembers(ctx context.Context, orgID string, p Page) ([]Member, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	return list(q, p, func(m *Member) string { return m.ID })
}

// UpdateMember changes role, name or active state. The last active owner
// can be neither demoted nor deactivated, so an organisation never loses
// its owner.
func (s *Store) UpdateMember(ctx context.Context, orgID, id string, p MemberPatch) (*Member, error) {
	var m *Member
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if m, err = take[Member](tx.Clauses(lockForUpdate(tx)...), orgID, id, "member"); err != nil {
			return err
		}
		losesOwner := m.Role == RoleOwner && m.Active &&
			((p.Role != nil && *p.Role != RoleOwner) || (p.Active != nil && !*p.Active))
		if losesOwner {
			var owners int64
			if err := tx.Model(&Member{}).Where("organization_id = ? AND role = ? AND active = ? AND id <> ?",
				orgID, RoleOwner, true, id).Count(&owners).Error; err != nil {
				return err
			}
			if owners == 0 {
				return apperr.New(apperr.InvalidState, "%s is the last active owner; make another member owner first", m.Email)
			}
		}
		if p.Name != nil {
			m.Name = strings.TrimSpace(*p.Name)
		}
		if p.Role != nil {
			m.Role = *p.Role
		}
		if p.Active != nil {
			m.Active = *p.Active
		}
		return tx.Save(m).Error
	})
	return m, err
}

// lockForUpdate locks selected rows on PostgreSQL; SQLite's IMMEDIATE
// transactions already serialise writers.
func lockForUpdate(tx *gorm.DB) []clause.Expression {
	if tx.Dialector.Name() == "postgres" {
		return []clause.Expression{clause.Locking{Strength: "UPDATE"}}
	}
	return nil
}

// NewTeam is the input for CreateTeam. Members are emails or member ids.
type NewTeam struct {
	Name    string   `json:"name" validate:"required,max=200"`
	Kind    string   `json:"kind" validate:"required,oneof=team group workspace"`
	Members []string `json:"members" validate:"max=1000"`
}

// CreateTeam makes a named set of existing members.
func (s *Store) CreateTeam(ctx context.Context, orgID string, in NewTeam) (*Team, error) {
	t := &Team{ID: newID(ids.Team), OrganizationID: orgID, Name: strings.TrimSpace(in.Name), Kind: in.Kind}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		members, err := resolveMembers(tx, orgID, in.Members)
		if err != nil {
			return err
		}
		t.Members = members
		return duplicate(tx.Create(t).Error, "name", "a team named %q already exists", t.Name)
	})
	return t, err
}

// resolveMembers finds each reference (an id or an email) among the
// organisation's members; unknown references are refused together.
func resolveMembers(tx *gorm.DB, orgID string, refs []string) ([]Member, error) {
	if len(refs) == 0 {
		return []Member{}, nil
	}
	var found []Member
	var idRefs, emailRefs []string
	for _, r := range refs {
		if ids.HasPrefix(r, ids.Member) {
			idRefs = append(idRefs, r)
		} else {
			emailRefs = append(emailRefs, NormalizeEmail(r))
		}
	}
	// The "" entries keep both IN lists non-empty, which SQL requires.
	if err := tx.Where("organization_id = ? AND (id IN ? OR email IN ?)", orgID,
		append(idRefs, ""), append(emailRefs, "")).Find(&found).Error; err != nil {
		return nil, err
	}
	var unknown []string
	var out []Member
	seen := map[string]bool{}
	for _, r := range refs {
		i := slices.IndexFunc(found, func(m Member) bool { return m.ID == r || m.Email == NormalizeEmail(r) })
		if i < 0 {
			unknown = append(unknown, r)
			continue
		}
		if !seen[found[i].ID] {
			seen[found[i].ID] = true
			out = append(out, found[i])
		}
	}
	if len(unknown) > 0 {
		return nil, apperr.Field(apperr.InvalidRequest, "members", "unknown members: %s", strings.Join(unknown, ", "))
	}
	return out, nil
}

// ListTeams pages through teams, groups and workspaces with their members.
func (s *Store) ListTeams(ctx context.Context, orgID string, p Page) ([]Team, string, error) {
	q := s.db.WithContext(ctx).Preload("Members", func(db *gorm.DB) *gorm.DB { return db.Order("members.id") }).
		Where("organization_id = ?", orgID)
	return list(q, p, func(t *Team) string { return t.ID })
}

// NewGuest admits an address that is not a member.
type NewGuest struct {
	Email string `json:"email" validate:"required,email,max=320"`
	Name  string `json:"name" validate:"max=200"`
}

// CreateGuest admits a guest. Admitting the same address again returns the
// existing guest with created false, so scripts can run twice.
func (s *Store) CreateGuest(ctx context.Context, orgID string, in NewGuest) (g *Guest, created bool, err error) {
	g = &Guest{ID: newID(ids.Guest), OrganizationID: orgID, Email: NormalizeEmail(in.Email), Name: strings.TrimSpace(in.Name)}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var members int64
		if err := tx.Model(&Member{}).Where("organization_id = ? AND email = ?", orgID, g.Email).Count(&members).Error; err != nil {
			return err
		}
		if members > 0 {
			return apperr.Field(apperr.Conflict, "email", "%s is a member, not a guest", g.Email)
		}
		var existing Guest
		err := tx.Where("organization_id = ? AND email = ?", orgID, g.Email).Take(&existing).Error
		if err == nil {
			*g = existing
			return nil
		}
		if err != gorm.ErrRecordNotFound {
			return err
		}
		created = true
		return tx.Create(g).Error
	})
	return g, created, err
}

// ListGuests pages through admitted guests.
func (s *Store) ListGuests(ctx context.Context, orgID string, p Page) ([]Guest, string, error) {
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	return list(q, p, func(g *Guest) string { return g.ID })
}
