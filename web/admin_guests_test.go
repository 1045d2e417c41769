package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestAdminRemovesAGuest: the guests page removes a guest once the row's
// box is ticked; the guest is signed out, their emailed link stops
// working, and a request that only they could decide goes to the owners
// and administrators, who are emailed.
func TestAdminRemovesAGuest(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		owner := models.RoleOwner
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Role = owner })
		guest, _, err := s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		foreign, _, err := s.store.CreateGuest(ctx, s.otherOrg(t).ID, "fay@partner.example", "")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Share the report"}, Risk: models.RiskLow, ApproverIDs: []string{guest.ID}})
		link := decisionLink.FindString(s.mailTo(t, "gus@partner.example", "Approval needed: Share the report").Text)
		require.NotEmpty(t, link)

		g := s.browser(t)
		g.signIn(s, "gus@partner.example")
		require.Equal(t, http.StatusOK, g.get("/approvals/"+a.ID).status)

		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		list := b.get("/admin/guests")
		assert.Contains(t, list.body, `action="/admin/guests/`+guest.ID+`/remove"`)
		assert.Contains(t, list.body, `name="confirm" value="yes" required`)

		// Without the box ticked nothing happens; another organisation's
		// guest is not found.
		r := b.post("/admin/guests/"+guest.ID+"/remove", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Tick Confirm beside the guest to remove them.", problemOf(t, r))
		assert.Equal(t, http.StatusNotFound, b.post("/admin/guests/"+foreign.ID+"/remove", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).status)
		require.Equal(t, http.StatusOK, g.get("/approvals/"+a.ID).status, "the guest is still in")

		r = b.post("/admin/guests/"+guest.ID+"/remove", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/guests?done=guest-removed", r.header.Get("Location"))
		after := b.get(r.header.Get("Location"))
		assert.Contains(t, after.body, "The guest was removed")
		assert.NotContains(t, after.body, "gus@partner.example")

		r = g.get("/approvals/" + a.ID)
		assert.Equal(t, http.StatusSeeOther, r.status, "signed out")
		assert.Equal(t, http.StatusNotFound, g.get(s.path(t, link)).status, "the emailed link no longer opens")

		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{s.ada.ID}, got.ApproverIDs)
		s.mailTo(t, "ada@example.com", "Approval needed: Share the report")
		assert.Contains(t, b.get("/inbox").body, "Share the report", "the owner has it now")
	})
}

// TestAdminRenamesAGuest: the guests page renames a guest from the row's
// form; the request they were asked before still waits on them, and
// another organisation's guest is not found.
func TestAdminRenamesAGuest(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		admin := models.RoleAdmin
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Role = admin })
		guest, _, err := s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		foreign, _, err := s.store.CreateGuest(ctx, s.otherOrg(t).ID, "fay@partner.example", "Fay")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Share the report"}, Risk: models.RiskLow, ApproverIDs: []string{guest.ID}})

		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		list := b.get("/admin/guests")
		assert.Contains(t, list.body, `action="/admin/guests/`+guest.ID+`"`)
		assert.Contains(t, list.body, `name="name" value="Gus"`, "the form holds the name")

		r := b.post("/admin/guests/"+guest.ID, url.Values{"name": {"Mallory"}})
		assert.Equal(t, http.StatusForbidden, r.status, "not without the form's token")
		r = b.post("/admin/guests/"+guest.ID, url.Values{"csrf": {csrf}, "name": {strings.Repeat("x", 201)}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Name must be at most 200 characters.", problemOf(t, r))
		assert.Equal(t, http.StatusNotFound, b.post("/admin/guests/"+foreign.ID, url.Values{"csrf": {csrf}, "name": {"Mine"}}).status)

		r = b.post("/admin/guests/"+guest.ID, url.Values{"csrf": {csrf}, "name": {"Gus Grey"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/guests?done=guest-updated", r.header.Get("Location"))
		after := b.get(r.header.Get("Location"))
		assert.Contains(t, after.body, "The guest was saved")
		assert.Contains(t, after.body, `name="name" value="Gus Grey"`)
		got, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		assert.Equal(t, "Gus Grey", got.Name)

		kept, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{guest.ID}, kept.ApproverIDs, "the request made earlier is unchanged")
		g := s.browser(t)
		gcsrf := g.signIn(s, "gus@partner.example")
		page := g.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, `class="decision"`, "the guest still decides it")
		r = g.post("/admin/guests/"+guest.ID, url.Values{"csrf": {gcsrf}, "name": {"Mallory"}})
		assert.Equal(t, http.StatusForbidden, r.status, "a guest renames nobody, not even themselves")
	})
}
