package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/wire"
)

// The admin endpoints manage the caller's own organisation (an admin key
// acts for all of it); every call takes the principal's organisation id.
// Every call goes through the admin service.

func OrgID(c *gin.Context) string { return Principal(c).Organization.ID }

func (h *handlers) getOrganization(c *gin.Context) {
	c.JSON(http.StatusOK, wire.NewOrganization(Principal(c).Organization))
}

func (h *handlers) updateOrganization(c *gin.Context) {
	var in admin.OrganizationPatch
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	org, err := h.admin.UpdateOrganization(c.Request.Context(), OrgID(c), admin.ByAdministrator, in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewOrganization(org))
}

func (h *handlers) createMember(c *gin.Context) {
	var in admin.NewMember
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	m, err := h.admin.CreateMember(c.Request.Context(), OrgID(c), Principal(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewMember(m))
}

func (h *handlers) listMembers(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.ListMembers(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewMember))
}

func (h *handlers) updateMember(c *gin.Context) {
	var in admin.MemberPatch
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	m, err := h.admin.UpdateMember(c.Request.Context(), OrgID(c), Principal(c), c.Param("id"), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewMember(m))
}

type tokenResponse struct {
	ID     string   `json:"id"`
	Token  string   `json:"token"`
	Scopes []string `json:"scopes"`
}

// createMemberToken mints, through an admin key, a token for a member that
// only reads (see admin.MintMemberToken).
func (h *handlers) createMemberToken(c *gin.Context) {
	h.mintMemberToken(c, nil, c.Param("id"))
}

// createOwnToken mints a token for the caller's own person, with at most
// the scopes of the member token calling.
func (h *handlers) createOwnToken(c *gin.Context) {
	p := Principal(c)
	if p.Member() == nil {
		Fail(c, apperr.New(apperr.Forbidden, "a token for a person is minted by that person: use a member token"))
		return
	}
	h.mintMemberToken(c, p.Key.Scopes, p.Member().ID)
}

// listOwnTokens pages through the caller's own member tokens, revoked
// ones included (admin.OwnTokens: a member token only).
func (h *handlers) listOwnTokens(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.OwnTokens(c.Request.Context(), OrgID(c), Principal(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewKey))
}

// revokeOwnToken revokes one of the caller's own member tokens; any other
// key is not found (admin.RevokeOwnToken).
func (h *handlers) revokeOwnToken(c *gin.Context) {
	k, err := h.admin.RevokeOwnToken(c.Request.Context(), OrgID(c), Principal(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewKey(k))
}

func (h *handlers) mintMemberToken(c *gin.Context, ceiling []string, memberID string) {
	var in admin.NewMemberToken
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	k, secret, err := h.admin.MintMemberToken(c.Request.Context(), OrgID(c), Principal(c), ceiling, memberID, in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, tokenResponse{ID: k.ID, Token: secret, Scopes: k.Scopes})
}

func (h *handlers) createTeam(c *gin.Context) {
	var in admin.NewTeam
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	t, err := h.admin.CreateTeam(c.Request.Context(), OrgID(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, wire.NewTeam(t))
}

func (h *handlers) listTeams(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.ListTeams(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewTeam))
}

func (h *handlers) createGuest(c *gin.Context) {
	var in admin.NewGuest
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	g, created, err := h.admin.CreateGuest(c.Request.Context(), OrgID(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, wire.NewGuest(g))
}

func (h *handlers) listGuests(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.ListGuests(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewGuest))
}

// updateGuest renames a guest; requests already made are unchanged.
func (h *handlers) updateGuest(c *gin.Context) {
	var in admin.GuestPatch
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	g, err := h.admin.UpdateGuest(c.Request.Context(), OrgID(c), c.Param("id"), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewGuest(g))
}

func (h *handlers) updateTeam(c *gin.Context) {
	var in admin.TeamPatch
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	t, err := h.admin.UpdateTeam(c.Request.Context(), OrgID(c), c.Param("id"), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewTeam(t))
}

func (h *handlers) deleteTeam(c *gin.Context) {
	if err := h.admin.DeleteTeam(c.Request.Context(), OrgID(c), c.Param("id")); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// removeGuest ends the guest's sessions and links and takes them off the
// pending requests they could decide; 204 once done.
func (h *handlers) removeGuest(c *gin.Context) {
	if err := h.admin.RemoveGuest(c.Request.Context(), OrgID(c), c.Param("id"), Principal(c)); err != nil {
		Fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// createdKey is the only response that carries a key's secret.
type createdKey struct {
	wire.Key
	Secret string `json:"key"`
}

func (h *handlers) createKey(c *gin.Context) {
	var in admin.NewKey
	if err := Bind(c, &in); err != nil {
		Fail(c, err)
		return
	}
	k, secret, err := h.admin.CreateKey(c.Request.Context(), OrgID(c), Principal(c), in)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, createdKey{Key: wire.NewKey(k), Secret: secret})
}

func (h *handlers) listKeys(c *gin.Context) {
	p, err := page(c)
	if err != nil {
		Fail(c, err)
		return
	}
	rows, next, err := h.admin.ListKeys(c.Request.Context(), OrgID(c), p)
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewList(rows, next, wire.NewKey))
}

func (h *handlers) revokeKey(c *gin.Context) {
	k, err := h.admin.RevokeKey(c.Request.Context(), OrgID(c), Principal(c), c.Param("id"))
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, wire.NewKey(k))
}
