package api_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestRemovingAGuestEndsTheirAccessAndHandsOnTheirRequests: a guest who is
// the only approver of a pending request is removed; their session and
// decision link stop working, the request's approvers become the owners
// and administrators (who can decide it), and its timeline says so.
// Another organisation's admin key cannot remove them.
func TestRemovingAGuestEndsTheirAccessAndHandsOnTheirRequests(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"guestsMayApprove":true}`, nil).status)
		gus, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"Partner work"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)
		created := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Share the report","risk":"low","approvers":["gus@partner.example"],"flowId":%q}`, flowID))
		id := created["id"].(string)
		waitFor(t, func() bool {
			a, err := approvals.Records(s.store).Get(ctx, s.org.ID, id)
			return err == nil && a.Seq > 0 // the workflow has taken it up
		})

		// What the guest holds: a signed-in session and an emailed link.
		_, session, err := accounts.New(s.store).CreateSession(ctx, s.org.ID, gus.ID)
		require.NoError(t, err)
		a, err := approvals.Records(s.store).Get(ctx, s.org.ID, id)
		require.NoError(t, err)
		link, err := s.store.CreateDecisionLink(ctx, a.OrganizationID, a.ID, a.ExpiresAt, gus.ID)
		require.NoError(t, err)

		path := "/api/v1/admin/guests/" + gus.ID
		r := s.do(t, "DELETE", path, s.otherAdmin, "", nil)
		assert.Equal(t, 404, r.status, "another organisation's admin key: %s", r.body)
		assert.Equal(t, "not_found", errField(r, "code"))
		_, _, err = accounts.New(s.store).LoadSession(ctx, session)
		require.NoError(t, err, "nothing was removed")

		r = s.do(t, "DELETE", path, s.adminKey, "", nil)
		require.Equal(t, 204, r.status, string(r.body))
		assert.Empty(t, r.body)

		_, _, err = accounts.New(s.store).LoadSession(ctx, session)
		assert.ErrorIs(t, err, accounts.ErrSessionInvalid)
		_, err = s.store.OpenDecisionLink(ctx, id, link)
		assert.True(t, apperr.Is(err, apperr.NotFound), "the link went with the guest: %v", err)

		// Ada is the owner, Bob an administrator: they decide it now.
		a, err = approvals.Records(s.store).Get(ctx, s.org.ID, id)
		require.NoError(t, err)
		assert.Equal(t, "pending", a.Status)
		assert.ElementsMatch(t, []string{s.member.ID, s.bob.ID}, []string(a.ApproverIDs))
		inbox := s.do(t, "GET", "/api/v1/inbox", s.bobToken, "", nil)
		require.Equal(t, 200, inbox.status, string(inbox.body))
		assert.Contains(t, string(inbox.body), id)

		timeline := s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil).decoded["timeline"].([]any)
		last := timeline[len(timeline)-1].(map[string]any)
		assert.Equal(t, approvals.ActionApproverRemoved, last["action"])
		assert.Equal(t, "admin", last["actor"], "the admin key's name")
		assert.Equal(t, "removed gus@partner.example from the approvers; "+approvals.DefaultApproversAdded, last["detail"])

		decided := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.bobToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, decided.status, string(decided.body))
		assert.Equal(t, "approved", decided.decoded["status"])

		// Gone is gone; the address can be admitted again, as a new guest.
		r = s.do(t, "DELETE", path, s.adminKey, "", nil)
		assert.Equal(t, 404, r.status)
		assert.Equal(t, "not_found", errField(r, "code"))
		again := s.do(t, "POST", "/api/v1/admin/guests", s.adminKey, `{"email":"gus@partner.example"}`, nil)
		require.Equal(t, 201, again.status, string(again.body))
		assert.NotEqual(t, gus.ID, again.decoded["id"])
	})
}

// TestRenamingAGuestLeavesTheirRequestsAsAsked: an administrator renames a
// guest; a request made earlier still shows the approvers it was asked of
// and still waits on the guest. Another organisation's admin key cannot
// rename them.
func TestRenamingAGuestLeavesTheirRequestsAsAsked(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		require.Equal(t, 200, s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"guestsMayApprove":true}`, nil).status)
		gus, err := s.store.GuestByEmail(ctx, s.org.ID, "gus@partner.example")
		require.NoError(t, err)
		id := s.create(t, s.agentKey, `{"title":"Share the report","risk":"low","approvers":["gus@partner.example"]}`)["id"].(string)

		path := "/api/v1/admin/guests/" + gus.ID
		r := s.do(t, "PATCH", path, s.otherAdmin, `{"name":"Mallory"}`, nil)
		assert.Equal(t, 404, r.status, "another organisation's admin key: %s", r.body)
		r = s.do(t, "PATCH", path, s.adminKey, `{"name":" Gus Grey "}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, gus.ID, r.decoded["id"])
		assert.Equal(t, "Gus Grey", r.decoded["name"])
		assert.Equal(t, "gus@partner.example", r.decoded["email"])
		r = s.do(t, "PATCH", path, s.adminKey, `{}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "Gus Grey", r.decoded["name"], "what is not given stays")

		got := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		assert.Equal(t, []any{"gus@partner.example"}, got.decoded["approvers"])
		a, err := approvals.Records(s.store).Get(ctx, s.org.ID, id)
		require.NoError(t, err)
		assert.Equal(t, models.StringList{gus.ID}, a.ApproverIDs, "the guest still decides it")
	})
}
