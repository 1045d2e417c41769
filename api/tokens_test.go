package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestAdminKeysMintNoTokenThatActsAsAPerson: an admin key mints nothing for
// an owner or administrator, and for a plain member only a token that
// reads; that token reads as the member but cannot decide. The member
// mints their own deciding token, and every mint is in the audit trail.
func TestAdminKeysMintNoTokenThatActsAsAPerson(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		var fixtures int64
		require.NoError(t, db.Model(&models.APIKey{}).Where("kind = ?", models.KeyMember).Count(&fixtures).Error)
		mint := func(key, memberID, body string) response {
			t.Helper()
			return s.do(t, "POST", "/api/v1/admin/members/"+memberID+"/tokens", key, body, nil)
		}

		// Owners and administrators: nothing, not even a token that reads.
		for _, who := range []*models.Member{s.member, s.bob} {
			for _, body := range []string{`{"scopes":["approvals:read","approvals:write"]}`, `{}`} {
				r := mint(s.adminKey, who.ID, body)
				assert.Equal(t, 403, r.status, "%s %s: %s", who.Role, body, r.body)
				assert.Equal(t, "forbidden", errField(r, "code"))
				assert.Contains(t, errField(r, "message"), "organisation "+who.Role+": only they mint their tokens")
			}
		}

		// A plain member: no scope that acts as them.
		for _, sc := range []string{scopes.ApprovalsWrite, scopes.CollectionsWrite, scopes.ReviewsWrite, scopes.CommentsWrite, scopes.ReportsWrite} {
			r := mint(s.adminKey, s.cy.ID, `{"scopes":["approvals:read","`+sc+`"]}`)
			assert.Equal(t, 403, r.status, "%s: %s", sc, r.body)
			assert.Equal(t, "scopes", errField(r, "field"))
			assert.Contains(t, errField(r, "message"), sc+" would act as the person")
		}
		r := mint(s.adminKey, s.cy.ID, `{"scopes":["nope:read"]}`)
		assert.Equal(t, 400, r.status, string(r.body))
		r = mint(s.adminKey, s.cy.ID, `{}`)
		require.Equal(t, 201, r.status, string(r.body))
		assert.ElementsMatch(t, scopes.Read, r.decoded["scopes"], "by default every read scope")
		r = mint(s.adminKey, s.cy.ID, `{"scopes":["approvals:read"]}`)
		require.Equal(t, 201, r.status, string(r.body))
		readOnly, readOnlyID := r.decoded["token"].(string), r.decoded["id"].(string)

		id := s.create(t, s.agentKey, `{"title":"Wire the deposit","risk":"critical","approvers":["cy@example.com"]}`)["id"].(string)
		assert.Equal(t, 200, s.do(t, "GET", "/api/v1/approvals/"+id, readOnly, "", nil).status, "it reads as Cy")
		r = s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", readOnly, `{"decision":"approve"}`, nil)
		assert.Equal(t, 403, r.status, string(r.body))
		assert.Equal(t, "insufficient_scope", errField(r, "code"))
		r = s.do(t, "POST", "/api/v1/approvals/"+id+"/questions", readOnly, `{"question":"Which account?"}`, nil)
		assert.Equal(t, 403, r.status, string(r.body))
		assert.Equal(t, "pending", s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil).decoded["status"])

		// Cy mints her own: within the minting token's scopes only.
		r = s.do(t, "POST", "/api/v1/me/tokens", readOnly, `{"scopes":["approvals:write"]}`, nil)
		assert.Equal(t, 403, r.status, "a read-only token cannot give more: %s", r.body)
		r = s.do(t, "POST", "/api/v1/me/tokens", s.adminKey, `{}`, nil)
		assert.Equal(t, 403, r.status, "an admin key is nobody's person: %s", r.body)
		r = s.do(t, "POST", "/api/v1/me/tokens", s.cyToken, `{"scopes":["approvals:read","approvals:write"]}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		own, ownID := r.decoded["token"].(string), r.decoded["id"].(string)
		r = s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", own, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "approved", r.decoded["status"])

		// Every mint is audited: who, for whom, which scopes.
		var adminKey models.APIKey
		require.NoError(t, db.Where("hash = ?", models.HashSecret(s.adminKey)).Take(&adminKey).Error)
		for tokenID, want := range map[string]struct{ actor, detail string }{
			readOnlyID: {adminKey.ID, "member token for cy@example.com (cy@example.com, " + s.cy.ID + "), scopes approvals:read"},
			ownID:      {s.cy.ID, "member token for cy@example.com (cy@example.com, " + s.cy.ID + "), scopes approvals:read, approvals:write"},
		} {
			var e models.AuditEntry
			require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", tokenID).Take(&e).Error)
			assert.Equal(t, models.KeyIssued, e.Action)
			assert.Equal(t, want.actor, e.ActorID)
			assert.Equal(t, want.detail, e.Detail)
		}
		var keys, entries int64
		require.NoError(t, db.Model(&models.APIKey{}).Where("member_id IN ?", []string{s.member.ID, s.bob.ID}).Count(&keys).Error)
		assert.EqualValues(t, 2, keys, "only the fixtures' own tokens: the refused mints made none")
		require.NoError(t, db.Model(&models.AuditEntry{}).Where("subject_type = ?", "key").Count(&entries).Error)
		require.NoError(t, db.Model(&models.APIKey{}).Where("kind = ?", models.KeyMember).Count(&keys).Error)
		assert.Equal(t, keys-fixtures, entries, "every member token minted is audited (the fixtures' are issued by the store, unaudited)")
		require.NoError(t, s.store.VerifyAuditChain(t.Context(), s.org.ID))
	})
}
