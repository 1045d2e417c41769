// Package admin is an organisation's administration: its settings, members,
// teams, guests, keys and rules. It is the one code path behind the admin
// API, the admin pages and `assent admin`, so all three refuse the same
// input with the same messages: each operation checks its input's tags and
// rules itself, deciding in its own transaction those that need one (the
// last owner), then calls the store, which still keeps the others that
// need a transaction (a member's or guest's address, a team's members). Reads, revocations and deletions go through the service too:
// it is the one path for all of them.
package admin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// NewOrganization is a new tenant.
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
	// DecisionTokenTTLSeconds is how long an approval's decision token
	// holds after the decision: a minute to 30 days.
	DecisionTokenTTLSeconds *int64 `json:"decisionTokenTtlSeconds" validate:"omitempty,min=60,max=2592000"`
	// ReportOrigins replaces the origins the organisation's reports may
	// load from and connect to besides their own (at most 20).
	ReportOrigins *[]string `json:"reportOrigins" validate:"omitempty,max=20"`
	// MembersMayGrantMandates lets every member grant standing mandates
	// within their own authority (by default only owners and
	// administrators may).
	MembersMayGrantMandates *bool `json:"membersMayGrantMandates"`
}

// NewMember adds a person; the role is member unless given.
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

// NewTeam is a named set of members, each an email or a member id.
type NewTeam struct {
	Name    string   `json:"name" validate:"required,max=200"`
	Kind    string   `json:"kind" validate:"required,oneof=team group workspace"`
	Members []string `json:"members" validate:"max=1000"`
}

// TeamPatch changes a team; nil fields stay. Members replace the list.
type TeamPatch struct {
	Name    *string   `json:"name" validate:"omitempty,min=1,max=200"`
	Members *[]string `json:"members" validate:"omitempty,max=1000"`
}

// NewGuest admits an address that is not a member.
type NewGuest struct {
	Email string `json:"email" validate:"required,email,max=320"`
	Name  string `json:"name" validate:"max=200"`
}

// GuestPatch changes a guest; nil fields stay. The address is who the
// guest is, so it is not changed here.
type GuestPatch struct {
	Name *string `json:"name" validate:"omitempty,max=200"`
}

// ownersOnly is refused when an administrator who is not an owner tries
// to make an owner or change one: only owners hand out or take away
// ownership, so an administrator cannot take over the organisation.
var ownersOnly = apperr.New(apperr.Forbidden, "only an owner can make someone an owner or change an owner's role or state")

// Store is what the administration reads and writes: the organisation's
// people, keys and rules (its own queries, Directory), its Slack app,
// what the System page counts, and the audit chain beside them.
type Store interface {
	Directory() *models.DirectoryStore
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	LockOrganization(ctx context.Context, orgID string) error
	NextSeq(ctx context.Context, orgID, subjectID string) (int, error)
	Audit(ctx context.Context, e *models.AuditEntry) error

	SlackIntegration(ctx context.Context, orgID string) (*models.SlackIntegration, error)
	PutSlackIntegration(ctx context.Context, orgID, by string, ch models.SlackChange) (*models.SlackIntegration, error)
	DeleteSlackIntegration(ctx context.Context, orgID string) error

	OpenRequests(ctx context.Context, orgID string) ([]models.OpenCount, error)
	OldestOpen(ctx context.Context, orgID string, n int) ([]models.OpenRequest, error)
	OutboxLag(ctx context.Context) (time.Duration, error)
}

// Service runs the administration's reads and writes against the store.
type Service struct {
	store Store
	// kinds are the request kinds' services, by kind; none where no
	// workflow runs.
	kinds map[string]Asked
	// netPolicy holds the model screen's endpoint (WithNetPolicy).
	netPolicy *netguard.Policy
}

// Asked is a kind of request's service, as removing a person sees it:
// *approvals.Service, *collections.Service and *reviews.Service are each
// one.
type Asked interface {
	// Kind names the kind (events.RequestApproval, …).
	Kind() string
	// RemoveAsked takes personID off each of the kind's open requests
	// named, through their workflows.
	RemoveAsked(ctx context.Context, orgID string, by models.Actor, personID, personName string, ids []string) error
}

// New returns the service; kinds are the request kinds' services, which
// removing a guest takes them off requests through. Without one (where no
// workflow runs), removing a guest still asked by its kind fails.
func New(store Store, kinds ...Asked) *Service {
	s := &Service{store: store, kinds: map[string]Asked{}}
	for _, k := range kinds {
		s.kinds[k.Kind()] = k
	}
	return s
}

// Operator is the instance's operator acting through `assent admin`, as
// the timeline names them.
var Operator = models.Actor{ID: "operator", Name: "the operator (assent admin)", Administrator: true}

// CreateOrganization makes a new tenant, on the free plan unless in says
// otherwise.
func (s *Service) CreateOrganization(ctx context.Context, in NewOrganization) (*models.Organization, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	return s.store.Directory().CreateOrganization(ctx, in.Name, in.Plan)
}

// Changer is who changes an organisation's settings.
type Changer int

const (
	// ByAdministrator is the organisation's own administrators, through
	// the admin API and pages.
	ByAdministrator Changer = iota
	// ByOperator is the instance's operator, through `assent admin`.
	ByOperator
)

// UpdateOrganization changes what in sets. Only the operator sets the
// plan: an organisation may not raise its own.
func (s *Service) UpdateOrganization(ctx context.Context, orgID string, by Changer, in OrganizationPatch) (*models.Organization, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	if in.Plan != nil && by != ByOperator {
		return nil, apperr.Field(apperr.Forbidden, "plan", "the plan is set by the operator of this Assent instance (assent admin), not by the organisation")
	}
	ch := models.OrganizationChange{Name: in.Name, Plan: in.Plan, GuestsMayApprove: in.GuestsMayApprove,
		MaxApprovalExpirySeconds: in.MaxApprovalExpirySeconds, DecisionTokenTTLSeconds: in.DecisionTokenTTLSeconds,
		MembersMayGrantMandates: in.MembersMayGrantMandates}
	if in.ReportOrigins != nil {
		origins, err := reportOrigins(*in.ReportOrigins)
		if err != nil {
			return nil, err
		}
		ch.ReportOrigins = &origins
	}
	return s.store.Directory().UpdateOrganization(ctx, orgID, ch)
}

// CreateMember adds an active person. A member acting (on the pages) must
// be an owner to add an owner; an admin key and the operator's shell act
// for the whole organisation.
func (s *Service) CreateMember(ctx context.Context, orgID string, by models.Actor, in NewMember) (*models.Member, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	if in.Role == models.RoleOwner && !ownsOrganization(by) {
		return nil, ownersOnly
	}
	var m *models.Member
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		// An address is a member's or a guest's, never both: the
		// organisation's lock keeps a guest from being admitted meanwhile.
		if err := s.store.LockOrganization(ctx, orgID); err != nil {
			return err
		}
		if _, err := s.store.Directory().GuestByEmail(ctx, orgID, in.Email); err == nil {
			return apperr.Field(apperr.Conflict, "email", "%s is already admitted as a guest", models.NormalizeEmail(in.Email))
		} else if !apperr.Is(err, apperr.NotFound) {
			return err
		}
		var err error
		m, err = s.store.Directory().CreateMember(ctx, orgID, in.Email, in.Name, in.Role)
		return err
	})
	if errors.Is(err, models.ErrDuplicate) {
		return nil, apperr.Field(apperr.Conflict, "email", "a member with email %s already exists", models.NormalizeEmail(in.Email))
	}
	return m, err
}

// ownsOrganization reports whether by may touch ownership: an owner, an
// admin key or the operator's shell, not another member.
func ownsOrganization(by models.Actor) bool {
	m := by.Member()
	return m == nil || m.Role == models.RoleOwner
}

// ListMembers pages through the organisation's members, newest first.
func (s *Service) ListMembers(ctx context.Context, orgID string, p models.Page) ([]models.Member, string, error) {
	return s.store.Directory().ListMembers(ctx, orgID, p)
}

// UpdateMember changes what in sets. by is as for CreateMember: a member
// who is not an owner may neither make an owner nor change one. The last
// active owner can be neither demoted nor deactivated, so an organisation
// never loses its owner: the organisation's row is locked meanwhile, so
// two owners demoting each other at once leave one.
func (s *Service) UpdateMember(ctx context.Context, orgID string, by models.Actor, id string, in MemberPatch) (*models.Member, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	var m *models.Member
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		if err := s.store.LockOrganization(ctx, orgID); err != nil {
			return err
		}
		var err error
		if m, err = s.store.Directory().LockMember(ctx, orgID, id); err != nil {
			return err
		}
		if !ownsOrganization(by) && (m.Role == models.RoleOwner || (in.Role != nil && *in.Role == models.RoleOwner)) {
			return ownersOnly
		}
		losesOwner := m.Role == models.RoleOwner && m.Active &&
			((in.Role != nil && *in.Role != models.RoleOwner) || (in.Active != nil && !*in.Active))
		if losesOwner {
			owners, err := s.store.Directory().ActiveOwners(ctx, orgID, id)
			if err != nil {
				return err
			}
			if owners == 0 {
				return apperr.New(apperr.InvalidState, "%s is the last active owner; make another member owner first", m.Email)
			}
		}
		if in.Name != nil {
			m.Name = strings.TrimSpace(*in.Name)
		}
		if in.Role != nil {
			m.Role = *in.Role
		}
		if in.Active != nil {
			m.Active = *in.Active
		}
		return s.store.Directory().SaveMember(ctx, m)
	})
	return m, err
}

// CreateTeam makes a team, group or workspace of existing members.
func (s *Service) CreateTeam(ctx context.Context, orgID string, in NewTeam) (*models.Team, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	var t *models.Team
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		members, err := s.members(ctx, orgID, in.Members)
		if err != nil {
			return err
		}
		t, err = s.store.Directory().CreateTeam(ctx, orgID, in.Name, in.Kind, members)
		return err
	})
	return t, teamNamed(err, in.Name)
}

// members are the organisation's members refs name (ids or emails); the
// references that name nobody are refused together.
func (s *Service) members(ctx context.Context, orgID string, refs []string) ([]models.Member, error) {
	found, unknown, err := s.store.Directory().FindMembers(ctx, orgID, refs)
	if err == nil && len(unknown) > 0 {
		err = apperr.Field(apperr.InvalidRequest, "members", "unknown members: %s", strings.Join(unknown, ", "))
	}
	return found, err
}

// teamNamed is err, a name already taken said as such.
func teamNamed(err error, name string) error {
	if errors.Is(err, models.ErrDuplicate) {
		return apperr.Field(apperr.Conflict, "name", "a team named %q already exists", strings.TrimSpace(name))
	}
	return err
}

// ListTeams pages through the organisation's teams, groups and
// workspaces with their members.
func (s *Service) ListTeams(ctx context.Context, orgID string, p models.Page) ([]models.Team, string, error) {
	return s.store.Directory().ListTeams(ctx, orgID, p)
}

// UpdateTeam renames a team or replaces its members; requests already made
// keep the people the team stood for then.
func (s *Service) UpdateTeam(ctx context.Context, orgID, id string, in TeamPatch) (*models.Team, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	var t *models.Team
	name := ""
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if t, err = s.store.Directory().LockTeam(ctx, orgID, id); err != nil {
			return err
		}
		if in.Name != nil {
			t.Name = strings.TrimSpace(*in.Name)
		}
		name = t.Name
		var members *[]models.Member
		if in.Members != nil {
			found, err := s.members(ctx, orgID, *in.Members)
			if err != nil {
				return err
			}
			members = &found
		}
		return s.store.Directory().SaveTeam(ctx, t, members)
	})
	return t, teamNamed(err, name)
}

// DeleteTeam removes a team; requests already made are unchanged.
func (s *Service) DeleteTeam(ctx context.Context, orgID, id string) error {
	return s.store.Directory().DeleteTeam(ctx, orgID, id)
}

// CreateGuest admits a guest; created is false when the address was
// already admitted, and nothing changes.
func (s *Service) CreateGuest(ctx context.Context, orgID string, in NewGuest) (g *models.Guest, created bool, err error) {
	if err := validate.Struct(&in); err != nil {
		return nil, false, err
	}
	err = s.store.Tx(ctx, func(ctx context.Context) error {
		// An address is a member's or a guest's, never both (see
		// CreateMember).
		if err := s.store.LockOrganization(ctx, orgID); err != nil {
			return err
		}
		member, err := s.store.Directory().IsMember(ctx, orgID, in.Email)
		if err != nil {
			return err
		}
		if member {
			return apperr.Field(apperr.Conflict, "email", "%s is a member, not a guest", models.NormalizeEmail(in.Email))
		}
		g, created, err = s.store.Directory().CreateGuest(ctx, orgID, in.Email, in.Name)
		return err
	})
	return g, created, err
}

// ListGuests pages through the organisation's admitted guests.
func (s *Service) ListGuests(ctx context.Context, orgID string, p models.Page) ([]models.Guest, string, error) {
	return s.store.Directory().ListGuests(ctx, orgID, p)
}

// UpdateGuest renames a guest; requests already made keep them as asked.
func (s *Service) UpdateGuest(ctx context.Context, orgID, id string, in GuestPatch) (*models.Guest, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	return s.store.Directory().UpdateGuest(ctx, orgID, id, in.Name)
}

// RemoveGuest removes a guest: their sessions, sign-in links and decision
// links end with them, in one transaction, and nothing can name them any
// more. Then each pending approval they could decide, open request for
// information and open review still waiting on them drops them through its
// workflow: an approval or a review gets the organisation's owners and
// administrators (for a review, those who can read its report) when those
// left could not settle it. by is who removes them, for the
// timeline. Should that second step stop short, calling again with the
// same id finishes it; an id that is neither a guest nor still on a
// request waiting on them is not found.
func (s *Service) RemoveGuest(ctx context.Context, orgID, id string, by models.Actor) error {
	var removed *models.Guest
	var waiting models.Waiting
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		g, missing := s.store.Directory().LockGuest(ctx, orgID, id)
		if missing != nil && !apperr.Is(missing, apperr.NotFound) {
			return missing
		}
		var err error
		if waiting, err = s.store.Directory().WaitingOn(ctx, orgID, id); err != nil {
			return err
		}
		if missing != nil {
			// Gone already: a call that stopped before taking them off
			// what still waits on them is finished by this one.
			if len(waiting) == 0 {
				return missing
			}
			return nil
		}
		removed = g
		return s.store.Directory().DeleteGuest(ctx, g)
	})
	if err != nil || len(waiting) == 0 {
		return err
	}
	for kind := range waiting {
		if s.kinds[kind] == nil {
			return apperr.New(apperr.Unavailable, "the guest was removed, but the requests still waiting on them cannot be changed here; retry where workflows run")
		}
	}
	name := id
	if removed != nil {
		name = removed.Email
	}
	var errs []error
	for kind, ids := range waiting {
		errs = append(errs, s.kinds[kind].RemoveAsked(ctx, orgID, by, id, name, ids))
	}
	return errors.Join(errs...)
}
