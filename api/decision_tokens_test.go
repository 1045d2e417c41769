package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// TestDecisionTokens: an approval approved with a correction carries a
// decision token in its read, its approval.approved webhook and its
// callback, the same one; it verifies against approvedInput with the keys
// of /.well-known/jwks.json, holds for the organisation's lifetime (or the
// approval's own), and fails for the input proposed. A rotated key stays
// listed, so what it signed still verifies.
func TestDecisionTokens(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		ctx := context.Background()

		// The organisation's lifetime of its tokens.
		org := s.do(t, "GET", "/api/v1/admin/organization", s.adminKey, "", nil)
		require.Equal(t, 200, org.status, string(org.body))
		assert.Equal(t, 3600.0, org.decoded["decisionTokenTtlSeconds"], "an hour unless set")
		for _, bad := range []string{`{"decisionTokenTtlSeconds":59}`, `{"decisionTokenTtlSeconds":2592001}`} {
			r := s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, bad, nil)
			assert.Equal(t, 400, r.status, bad)
			assert.Equal(t, "decisionTokenTtlSeconds", errField(r, "field"), bad)
		}
		org = s.do(t, "PATCH", "/api/v1/admin/organization", s.adminKey, `{"decisionTokenTtlSeconds":600}`, nil)
		require.Equal(t, 200, org.status, string(org.body))
		assert.Equal(t, 600.0, org.decoded["decisionTokenTtlSeconds"])

		hook := newReceiver(t, "whsec_hook")
		_, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: hook.srv.URL + "/hook", Format: models.FormatJSON,
			Events: []string{"approval.approved"}, Enabled: true, Secret: "whsec_hook"})
		require.NoError(t, err)
		cb := newReceiver(t, "")
		proposed := `{"amount":100,"currency":"EUR","lines":[{"sku":"A-1","qty":2}]}`
		a := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Refund","approvers":["cy@example.com"],"input":%s,
			"editableFields":["amount"],"callbackUrl":%q}`, proposed, cb.srv.URL+"/cb"))
		cb.mu.Lock()
		cb.secret = a["callbackSecret"].(string)
		cb.mu.Unlock()
		id := a["id"].(string)
		pending := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		assert.NotContains(t, pending.decoded, "decisionToken", "nothing is approved yet")

		r := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve","corrections":{"amount":80}}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		got := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		require.Equal(t, 200, got.status, string(got.body))
		token, _ := got.decoded["decisionToken"].(string)
		require.NotEmpty(t, token, string(got.body))
		// The agent verifies with what it read: approvedInput as JSON, in
		// whatever key order its decoder writes.
		approvedInput, err := json.Marshal(got.decoded["approvedInput"])
		require.NoError(t, err)

		verifier := func() *decisiontoken.Verifier {
			jwks := s.do(t, "GET", "/.well-known/jwks.json", "", "", nil)
			require.Equal(t, 200, jwks.status, string(jwks.body))
			v, err := decisiontoken.NewVerifier(jwks.body, "http://assent.test", s.org.ID)
			require.NoError(t, err)
			return v
		}
		v := verifier()
		claims, err := v.Verify(token, approvedInput)
		require.NoError(t, err)
		assert.Equal(t, id, claims.Subject)
		assert.Equal(t, s.org.ID, claims.Organization)
		assert.Equal(t, "http://assent.test", claims.Issuer)
		assert.Equal(t, []string{s.cy.ID}, claims.Deciders)
		assert.Empty(t, claims.Action, "not gated")
		assert.Equal(t, 10*time.Minute, claims.Expiry.Sub(claims.IssuedAt), "the organisation's lifetime")
		decidedAt, err := time.Parse(time.RFC3339Nano, got.decoded["decidedAt"].(string))
		require.NoError(t, err)
		assert.Equal(t, decidedAt.Unix(), claims.IssuedAt.Unix(), "issued at the decision")

		_, err = v.Verify(token, []byte(proposed))
		assert.ErrorIs(t, err, decisiontoken.ErrInput, "the input proposed was not the one approved")
		_, err = v.Verify(token, []byte(`{"lines":[{"qty":2,"sku":"A-1"}],"currency":"EUR","amount":80.0}`))
		assert.NoError(t, err, "the approved input, spelled otherwise")
		other := *v
		other.Organization = "org_other"
		_, err = other.Verify(token, approvedInput)
		assert.ErrorIs(t, err, decisiontoken.ErrOrganization)

		// The webhook and the callback carry the same token.
		waitFor(t, func() bool { return len(hook.received()) == 1 && len(cb.received()) == 1 })
		for _, g := range append(hook.received(), cb.received()...) {
			assert.NoError(t, g.verified)
			assert.Equal(t, "approval.approved", g.event)
			assert.Equal(t, token, g.body["data"].(map[string]any)["decisionToken"], "%s", g.raw)
		}

		// A rotation: the old key stays listed and its token verifies; the
		// next approval is signed with the new key, for its own lifetime.
		before, _, err := s.store.ActiveSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)
		next, err := s.store.RotateSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)
		v = verifier()
		require.Len(t, v.Keys.Keys, 2, "a retired key stays listed")
		_, err = v.Verify(token, approvedInput)
		assert.NoError(t, err, "signed by %s, retired", before.ID)

		b := s.create(t, s.agentKey, `{"title":"Pay","approvers":["cy@example.com"],"input":{"amount":5}}`)
		require.NoError(t, db.Model(&approvals.Approval{}).Where("id = ?", b["id"]).Update("decision_token_ttl_seconds", 120).Error)
		r = s.do(t, "POST", "/api/v1/approvals/"+b["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		got = s.do(t, "GET", "/api/v1/approvals/"+b["id"].(string), s.agentKey, "", nil)
		claims, err = v.Verify(got.decoded["decisionToken"].(string), []byte(`{"amount":5}`))
		require.NoError(t, err)
		assert.Equal(t, 2*time.Minute, claims.Expiry.Sub(claims.IssuedAt), "the approval's own lifetime")
		v.Keys.Keys = v.Keys.Key(before.ID)
		_, err = v.Verify(got.decoded["decisionToken"].(string), []byte(`{"amount":5}`))
		assert.ErrorIs(t, err, decisiontoken.ErrUnknownKey, "signed with %s, not the retired key", next.ID)
	})
}
