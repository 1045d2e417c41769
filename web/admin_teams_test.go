package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestAdminEditsAndRemovesTeams: the teams page renames a team, replaces
// its members and removes it once the row's box is ticked; another
// organisation's team is not found.
func TestAdminEditsAndRemovesTeams(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		owner := models.RoleOwner
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Role = owner })
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		team, err := testenv.CreateTeam(s.store, ctx, s.org.ID, "Finance", models.TeamKindTeam, []string{s.ada.ID})
		require.NoError(t, err)
		otherOrg, err := s.store.CreateOrganization(ctx, "Other", "")
		require.NoError(t, err)
		theirs, err := testenv.CreateTeam(s.store, ctx, otherOrg.ID, "Theirs", models.TeamKindTeam, nil)
		require.NoError(t, err)

		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		list := b.get("/admin/teams")
		assert.Contains(t, list.body, `action="/admin/teams/`+team.ID+`"`)
		assert.Contains(t, list.body, `>ada@example.com</textarea>`, "the form holds the members")

		r := b.post("/admin/teams/"+team.ID, url.Values{"csrf": {csrf}, "name": {"Finance team"}, "members": {"bob@example.com"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "The team was saved")
		teams, _, err := s.store.ListTeams(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, teams, 1)
		assert.Equal(t, "Finance team", teams[0].Name)
		require.Len(t, teams[0].Members, 1)
		assert.Equal(t, bob.ID, teams[0].Members[0].ID)

		bad := b.post("/admin/teams/"+team.ID, url.Values{"csrf": {csrf}, "name": {"Finance team"}, "members": {"nobody@example.com"}})
		assert.Equal(t, http.StatusBadRequest, bad.status)
		assert.Contains(t, bad.body, "nobody@example.com")

		assert.Equal(t, http.StatusNotFound, b.post("/admin/teams/"+theirs.ID, url.Values{"csrf": {csrf}, "name": {"Mine"}}).status)
		assert.Equal(t, http.StatusNotFound, b.post("/admin/teams/"+theirs.ID+"/remove", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).status)

		r = b.post("/admin/teams/"+team.ID+"/remove", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusBadRequest, r.status, "not without Confirm")
		r = b.post("/admin/teams/"+team.ID+"/remove", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "The team was removed")
		teams, _, err = s.store.ListTeams(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, teams)
	})
}
