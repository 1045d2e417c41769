package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/apperr"
)

// The directory pages: members, teams and groups, guests.

var (
	roles     = []string{admin.RoleMember, admin.RoleAdmin, admin.RoleOwner}
	teamKinds = []string{admin.TeamKindTeam, admin.TeamKindGroup, admin.TeamKindWorkspace}
)

type membersPage struct {
	adminBase
	Members []admin.Member
	Pager   pager
	Form    admin.NewMember
	Roles   []string
	// Me is the signed-in member's id.
	Me string
	// RoleChange is a refused row's change, shown again in its row (not
	// in the add form) with the refusal.
	RoleChange roleChange
}

type roleChange struct{ Member, Role string }

func (p *Pages) adminMembers(c *gin.Context) {
	p.showMembers(c, http.StatusOK, nil, admin.NewMember{Role: admin.RoleMember}, roleChange{})
}

// showMembers renders the member list with prob (a refused action) and
// what was typed into the add form or a row's role.
func (p *Pages) showMembers(c *gin.Context, status int, prob *formProblem, form admin.NewMember, change roleChange) {
	rows, next, err := p.admin.ListMembers(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := membersPage{adminBase: base(c, "members"), Members: rows, Pager: newPager(c, "/admin/members", next),
		Form: form, Roles: roles, Me: CurrentPerson(c).Member.ID, RoleChange: change}
	page.Problem = prob
	p.Render(c, status, "admin_members", page)
}

// membersRefused shows the member list again with why the action was
// refused. A row's refusal names no add-form field.
func (p *Pages) membersRefused(c *gin.Context, err error, form admin.NewMember, change roleChange) {
	if prob, status, ok := p.refusedBy(c, err, memberLabels); ok {
		if change.Member != "" {
			prob.Field = ""
		}
		p.showMembers(c, status, prob, form, change)
	}
}

func (p *Pages) addMember(c *gin.Context) {
	in := admin.NewMember{Email: c.PostForm("email"), Name: c.PostForm("name"), Role: c.PostForm("role")}
	if _, err := p.admin.CreateMember(c.Request.Context(), orgOf(c), currentActor(c), in); err != nil {
		p.membersRefused(c, err, in, roleChange{})
		return
	}
	Done(c, "/admin/members", "member-added")
}

func (p *Pages) changeRole(c *gin.Context) {
	role := c.PostForm("role")
	patch := admin.MemberPatch{Role: &role}
	if err := p.updateMember(c, patch); err != nil {
		p.membersRefused(c, err, admin.NewMember{Role: admin.RoleMember}, roleChange{Member: c.Param("id"), Role: role})
		return
	}
	Done(c, "/admin/members", "role-changed")
}

func (p *Pages) setMemberActive(c *gin.Context) {
	active, err := formBool(c, "active")
	if err == nil {
		err = p.updateMember(c, admin.MemberPatch{Active: &active})
	}
	if err != nil {
		p.membersRefused(c, err, admin.NewMember{Role: admin.RoleMember}, roleChange{Member: c.Param("id")})
		return
	}
	if active {
		Done(c, "/admin/members", "member-reactivated")
		return
	}
	Done(c, "/admin/members", "member-deactivated")
}

// updateMember applies patch to the member in the path, as the signed-in
// member: only owners may touch ownership.
func (p *Pages) updateMember(c *gin.Context, patch admin.MemberPatch) error {
	_, err := p.admin.UpdateMember(c.Request.Context(), orgOf(c), currentActor(c), c.Param("id"), patch)
	return err
}

// formBool reads a true/false form field.
func formBool(c *gin.Context, name string) (bool, error) {
	switch c.PostForm(name) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, apperr.Field(apperr.InvalidRequest, name, "%s must be true or false", name)
}

// The directory forms' fields as their pages label them.
var (
	memberLabels = Labels{"email": "Email address", "name": "Name", "role": "Role"}
	teamLabels   = Labels{"name": "Name", "kind": "Kind", "members": "Members"}
	guestLabels  = Labels{"email": "Email address", "name": "Name"}
)

type teamsPage struct {
	adminBase
	Teams []admin.Team
	Pager pager
	Form  teamForm
	Kinds []string
	// Row is what was typed into a row's edit form that was refused.
	Row rowForm
}

// rowForm is what was typed into the edit form of the row ID.
type rowForm struct {
	ID, Name, Members string
}

// rowProblem is a row form's refusal: its field named "row.<field>", so
// only the row's input is marked, not the add form's of the same name.
func rowProblem(prob *formProblem) *formProblem {
	if prob == nil || prob.Field == "" {
		return prob
	}
	return &formProblem{Field: "row." + prob.Field, Message: prob.Message}
}

// Editing is what was typed into row id's refused form, nil for the
// other rows.
func (r rowForm) Editing(id string) *rowForm {
	if r.ID == "" || r.ID != id {
		return nil
	}
	return &r
}

// teamForm is what was typed into the new-team form; Members as typed.
type teamForm struct {
	Name, Kind, Members string
}

func (p *Pages) adminTeams(c *gin.Context) {
	p.showTeams(c, http.StatusOK, nil, teamForm{Kind: admin.TeamKindTeam})
}

func (p *Pages) showTeams(c *gin.Context, status int, prob *formProblem, form teamForm, row ...rowForm) {
	rows, next, err := p.admin.ListTeams(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := teamsPage{adminBase: base(c, "teams"), Teams: rows, Pager: newPager(c, "/admin/teams", next), Form: form, Kinds: teamKinds}
	page.Problem = prob
	if len(row) > 0 {
		page.Row, page.Problem = row[0], rowProblem(prob)
	}
	p.Render(c, status, "admin_teams", page)
}

func (p *Pages) createTeam(c *gin.Context) {
	form := teamForm{Name: c.PostForm("name"), Kind: c.PostForm("kind"), Members: c.PostForm("members")}
	in := admin.NewTeam{Name: form.Name, Kind: form.Kind, Members: splitList(form.Members)}
	if _, err := p.admin.CreateTeam(c.Request.Context(), orgOf(c), in); err != nil {
		if prob, status, ok := p.refusedBy(c, err, teamLabels); ok {
			p.showTeams(c, status, prob, form)
		}
		return
	}
	Done(c, "/admin/teams", "team-created")
}

type guestsPage struct {
	adminBase
	Guests []admin.Guest
	Pager  pager
	Form   admin.NewGuest
	// Row is what was typed into a row's edit form that was refused.
	Row rowForm
}

func (p *Pages) adminGuests(c *gin.Context) {
	p.showGuests(c, http.StatusOK, nil, admin.NewGuest{})
}

func (p *Pages) showGuests(c *gin.Context, status int, prob *formProblem, form admin.NewGuest, row ...rowForm) {
	rows, next, err := p.admin.ListGuests(c.Request.Context(), orgOf(c), adminPage(c))
	if err != nil {
		p.Fail(c, err)
		return
	}
	page := guestsPage{adminBase: base(c, "guests"), Guests: rows, Pager: newPager(c, "/admin/guests", next), Form: form}
	page.Problem = prob
	if len(row) > 0 {
		page.Row, page.Problem = row[0], rowProblem(prob)
	}
	p.Render(c, status, "admin_guests", page)
}

// admitGuest admits an address; admitting it again says so and changes
// nothing.
func (p *Pages) admitGuest(c *gin.Context) {
	in := admin.NewGuest{Email: c.PostForm("email"), Name: c.PostForm("name")}
	_, created, err := p.admin.CreateGuest(c.Request.Context(), orgOf(c), in)
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, guestLabels); ok {
			p.showGuests(c, status, prob, in)
		}
		return
	}
	if !created {
		Done(c, "/admin/guests", "guest-existed")
		return
	}
	Done(c, "/admin/guests", "guest-admitted")
}

// updateTeam saves a team's name and members as the row's form holds them.
func (p *Pages) updateTeam(c *gin.Context) {
	row := rowForm{ID: c.Param("id"), Name: c.PostForm("name"), Members: c.PostForm("members")}
	name, members := row.Name, splitList(row.Members)
	if _, err := p.admin.UpdateTeam(c.Request.Context(), orgOf(c), c.Param("id"), admin.TeamPatch{Name: &name, Members: &members}); err != nil {
		if prob, status, ok := p.refusedBy(c, err, teamLabels); ok {
			p.showTeams(c, status, prob, teamForm{Kind: admin.TeamKindTeam}, row)
		}
		return
	}
	Done(c, "/admin/teams", "team-updated")
}

// removeTeam removes a team once Confirm is ticked.
func (p *Pages) removeTeam(c *gin.Context) {
	err := confirmed(c, "team")
	if err == nil {
		err = p.admin.DeleteTeam(c.Request.Context(), orgOf(c), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, teamLabels); ok {
			p.showTeams(c, status, prob, teamForm{Kind: admin.TeamKindTeam})
		}
		return
	}
	Done(c, "/admin/teams", "team-removed")
}

// updateGuest saves a guest's name as the row's form holds it.
func (p *Pages) updateGuest(c *gin.Context) {
	row := rowForm{ID: c.Param("id"), Name: c.PostForm("name")}
	if _, err := p.admin.UpdateGuest(c.Request.Context(), orgOf(c), c.Param("id"), admin.GuestPatch{Name: &row.Name}); err != nil {
		if prob, status, ok := p.refusedBy(c, err, guestLabels); ok {
			p.showGuests(c, status, prob, admin.NewGuest{}, row)
		}
		return
	}
	Done(c, "/admin/guests", "guest-updated")
}

// removeGuest removes a guest once the row's box confirms it: there is no
// script to ask, and removal cannot be undone (admitting the address again
// makes a new guest).
func (p *Pages) removeGuest(c *gin.Context) {
	var err error = apperr.Field(apperr.InvalidRequest, "confirm", "tick Confirm beside the guest to remove them")
	if c.PostForm("confirm") == "yes" {
		err = p.admin.RemoveGuest(c.Request.Context(), orgOf(c), c.Param("id"), CurrentPerson(c).Actor())
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, guestLabels); ok {
			p.showGuests(c, status, prob, admin.NewGuest{})
		}
		return
	}
	Done(c, "/admin/guests", "guest-removed")
}
