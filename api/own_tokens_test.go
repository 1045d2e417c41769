package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestOwnTokensListAndRevoke: a member lists the member tokens that act as
// them, revoked ones included, newest first and paged, and nobody else's
// token nor any key; they revoke one of their own, which then gets 401,
// audited as key.revoked naming them after the key's key.issued. Another
// member's token, an agent key and an admin key are not found, answered
// as an id that does not exist, and keep working; a second revocation
// changes nothing and writes nothing. Only a member token may call.
func TestOwnTokensListAndRevoke(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		keyID := func(secret string) string {
			t.Helper()
			var k models.APIKey
			require.NoError(t, db.Where("hash = ?", models.HashSecret(secret)).Take(&k).Error)
			return k.ID
		}
		cy, err := f.store.CreateMember(ctx, f.org.ID, "cy@example.com", "Cy", models.RoleMember)
		require.NoError(t, err)
		_, cyToken, err := f.store.CreateMemberToken(ctx, f.org.ID, cy.ID)
		require.NoError(t, err)
		mint := func(token, body string) (string, string) {
			t.Helper()
			r := f.do(t, "POST", "/api/v1/me/tokens", token, body, nil)
			require.Equal(t, 201, r.status, string(r.body))
			return r.decoded["id"].(string), r.decoded["token"].(string)
		}
		// Cy's: the fixture's, two she mints, one an admin key mints her.
		readID, readSecret := mint(cyToken, `{"scopes":["approvals:read"]}`)
		writeID, _ := mint(cyToken, `{"scopes":["approvals:read","approvals:write"]}`)
		r := f.do(t, "POST", "/api/v1/admin/members/"+cy.ID+"/tokens", f.adminKey, `{}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		byAdminID := r.decoded["id"].(string)
		cyIDs := []string{byAdminID, writeID, readID, keyID(cyToken)} // newest first
		// Ada's, and an agent key: not Cy's.
		adaID, _ := mint(f.memberToken, `{}`)
		agent := f.do(t, "POST", "/api/v1/admin/keys", f.adminKey, `{"name":"bot","kind":"agent","scopes":["flows:read"]}`, nil)
		require.Equal(t, 201, agent.status, string(agent.body))
		agentID, agentSecret := agent.decoded["id"].(string), agent.decoded["key"].(string)

		list := func(token, query string) ([]string, []map[string]any, string) {
			t.Helper()
			r := f.do(t, "GET", "/api/v1/me/tokens"+query, token, "", nil)
			require.Equal(t, 200, r.status, string(r.body))
			var got []string
			var rows []map[string]any
			for _, row := range r.decoded["data"].([]any) {
				m := row.(map[string]any)
				got = append(got, m["id"].(string))
				rows = append(rows, m)
			}
			next, _ := r.decoded["nextCursor"].(string)
			return got, rows, next
		}
		got, rows, next := list(cyToken, "")
		assert.Equal(t, cyIDs, got, "Cy's own tokens, newest first, and no one else's")
		assert.Empty(t, next)
		for _, row := range rows {
			assert.Equal(t, "member", row["kind"])
			assert.Equal(t, cy.ID, row["memberId"])
			assert.NotContains(t, row, "key", "no secret")
		}
		// Paged like every list.
		first, _, next := list(cyToken, "?limit=3")
		require.NotEmpty(t, next)
		rest, _, last := list(cyToken, "?limit=3&cursor="+url.QueryEscape(next))
		assert.Equal(t, cyIDs, append(first, rest...))
		assert.Empty(t, last)
		ada, _, _ := list(f.memberToken, "")
		assert.Equal(t, []string{adaID, keyID(f.memberToken)}, ada, "Ada sees hers, not Cy's")

		// Cy revokes one of hers: it stops working at once.
		require.Equal(t, 200, f.do(t, "GET", "/api/v1/me", readSecret, "", nil).status)
		r = f.do(t, "DELETE", "/api/v1/me/tokens/"+readID, cyToken, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, readID, r.decoded["id"])
		revokedAt, _ := r.decoded["revokedAt"].(string)
		require.NotEmpty(t, revokedAt)
		r = f.do(t, "GET", "/api/v1/me", readSecret, "", nil)
		assert.Equal(t, 401, r.status, "a revoked token is refused: %s", r.body)
		_, rows, _ = list(cyToken, "")
		for _, row := range rows {
			if row["id"] == readID {
				assert.Equal(t, revokedAt, row["revokedAt"], "listed, revoked")
			} else {
				assert.Nil(t, row["revokedAt"], "the others stay live")
			}
		}
		// Audited after its issue, naming Cy; again changes nothing.
		entries := func(id string) []models.AuditEntry {
			t.Helper()
			var out []models.AuditEntry
			require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", id).Order("seq").Find(&out).Error)
			return out
		}
		es := entries(readID)
		require.Len(t, es, 2)
		assert.Equal(t, []string{models.KeyIssued, models.KeyRevoked}, []string{es[0].Action, es[1].Action})
		assert.Equal(t, 2, es[1].Seq, "numbered after the key's key.issued")
		assert.Equal(t, cy.ID, es[1].ActorID, "Cy revoked it")
		assert.Equal(t, "Cy", es[1].ActorName)
		assert.Equal(t, "member token for cy@example.com ("+cy.ID+"), starting "+readSecret[:len("asnt_member_")+4], es[1].Detail)
		r = f.do(t, "DELETE", "/api/v1/me/tokens/"+readID, cyToken, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, revokedAt, r.decoded["revokedAt"], "revoking a revoked token changes nothing")
		assert.Len(t, entries(readID), 2, "and writes nothing")

		// Anything not Cy's is not found, as a missing id is, and keeps working.
		missing := f.do(t, "DELETE", "/api/v1/me/tokens/key_0000000000000000000000", cyToken, "", nil)
		require.Equal(t, 404, missing.status, string(missing.body))
		for name, id := range map[string]string{"Ada's token": adaID, "an agent key": agentID, "an admin key": keyID(f.adminKey)} {
			before := len(entries(id))
			r = f.do(t, "DELETE", "/api/v1/me/tokens/"+id, cyToken, "", nil)
			assert.Equal(t, 404, r.status, "%s: %s", name, r.body)
			assert.Equal(t, "not_found", errField(r, "code"), name)
			assert.Equal(t, errField(missing, "message"), errField(r, "message"), "%s is answered as a missing id", name)
			assert.Len(t, entries(id), before, "%s: nothing audited", name)
			var k models.APIKey
			require.NoError(t, db.Where("id = ?", id).Take(&k).Error)
			assert.Nil(t, k.RevokedAt, "%s is not revoked", name)
		}
		assert.Equal(t, 200, f.do(t, "GET", "/api/v1/me", agentSecret, "", nil).status, "the agent key still works")

		// Only a member token lists or revokes here: a person's own list.
		for name, key := range map[string]string{"agent key": f.agentKey, "admin key": f.adminKey} {
			r = f.do(t, "GET", "/api/v1/me/tokens", key, "", nil)
			assert.Equal(t, 403, r.status, "%s: %s", name, r.body)
			assert.Equal(t, "forbidden", errField(r, "code"))
			assert.Contains(t, errField(r, "message"), "a person's list of their own tokens: use a member token")
			r = f.do(t, "DELETE", "/api/v1/me/tokens/"+writeID, key, "", nil)
			assert.Equal(t, 403, r.status, "%s: %s", name, r.body)
			assert.Contains(t, errField(r, "message"), "a person revokes their own tokens here: use a member token")
		}
		assert.Len(t, entries(writeID), 1, "refused, nothing revoked")

		// A token may revoke itself; its next request fails.
		selfID, selfSecret := mint(cyToken, `{"scopes":["`+scopes.ApprovalsRead+`"]}`)
		// Sent past the contract check, which would authenticate the
		// token again after it was revoked.
		req, err := http.NewRequest("DELETE", f.srv.URL+"/api/v1/me/tokens/"+selfID, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+selfSecret)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, 401, f.do(t, "GET", "/api/v1/me/tokens", selfSecret, "", nil).status)

		require.NoError(t, f.store.VerifyAuditChain(ctx, f.org.ID), "the chain verifies with the revocations in it")
	})
}

// TestAdminRevokeIsAudited: an admin key revoking a key or a member token
// writes key.revoked naming the admin key, numbered after the key's own
// entries; the chain still verifies, and a second revocation writes
// nothing.
func TestAdminRevokeIsAudited(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		var adminKey models.APIKey
		require.NoError(t, db.Where("hash = ?", models.HashSecret(f.adminKey)).Take(&adminKey).Error)
		agent := f.do(t, "POST", "/api/v1/admin/keys", f.adminKey, `{"name":"bot","kind":"agent","scopes":["flows:read"]}`, nil)
		require.Equal(t, 201, agent.status, string(agent.body))
		token := f.do(t, "POST", "/api/v1/me/tokens", f.memberToken, `{"scopes":["approvals:read"]}`, nil)
		require.Equal(t, 201, token.status, string(token.body))
		for _, tc := range []struct{ id, secret, detail string }{
			{agent.decoded["id"].(string), agent.decoded["key"].(string), "agent key bot, starting " + agent.decoded["prefix"].(string)},
			{token.decoded["id"].(string), token.decoded["token"].(string), "member token for ada@example.com (" + f.member.ID + "), starting " +
				token.decoded["token"].(string)[:len("asnt_member_")+4]},
		} {
			for range 2 {
				r := f.do(t, "DELETE", "/api/v1/admin/keys/"+tc.id, f.adminKey, "", nil)
				require.Equal(t, 200, r.status, string(r.body))
			}
			assert.Equal(t, 401, f.do(t, "GET", "/api/v1/me", tc.secret, "", nil).status)
			var es []models.AuditEntry
			require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", tc.id).Order("seq").Find(&es).Error)
			require.Len(t, es, 2, "issued, then revoked once")
			assert.Equal(t, models.KeyRevoked, es[1].Action)
			assert.Equal(t, 2, es[1].Seq)
			assert.Equal(t, adminKey.ID, es[1].ActorID, "the admin key revoked it")
			assert.Equal(t, "admin", es[1].ActorName)
			assert.Equal(t, tc.detail, es[1].Detail)
		}
		require.NoError(t, f.store.VerifyAuditChain(context.Background(), f.org.ID))
	})
}
