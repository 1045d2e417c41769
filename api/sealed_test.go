package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestSealedSecretsMovedBetweenOrganisationsDoNotOpen: someone who can
// write to the database copies one organisation's sealed values into the
// other's rows. The other organisation's reads fail with the error
// envelope, holding neither secret: the stored response of a key creation
// does not replay another organisation's admin key, and the Slack app does
// not read another organisation's bot token.
func TestSealedSecretsMovedBetweenOrganisationsDoNotOpen(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		org, other := f.org.ID, f.otherMember.OrganizationID

		const token, otherToken = "xoxb-1111-org-a-token", "xoxb-2222-org-b-token"
		for key, tok := range map[string]string{f.adminKey: token, f.otherAdmin: otherToken} {
			r := f.do(t, "PUT", "/api/v1/admin/integrations/slack", key, `{"signingSecret":"`+slackSecret+`","botToken":"`+tok+`"}`, nil)
			require.Equal(t, 200, r.status, string(r.body))
		}
		once := map[string]string{"Idempotency-Key": "mint-1"}
		made := map[string]string{}
		for _, key := range []string{f.adminKey, f.otherAdmin} {
			r := f.do(t, "POST", "/api/v1/admin/keys", key, `{"name":"ci","kind":"admin"}`, once)
			require.Equal(t, 201, r.status, string(r.body))
			made[key] = r.decoded["key"].(string)
			replay := f.do(t, "POST", "/api/v1/admin/keys", key, `{"name":"ci","kind":"admin"}`, once)
			require.Equal(t, made[key], replay.decoded["key"], "a replay returns the stored response")
		}

		require.NoError(t, db.Exec(`UPDATE slack_integrations SET bot_token =
			(SELECT bot_token FROM slack_integrations WHERE organization_id = ?) WHERE organization_id = ?`, org, other).Error)
		require.NoError(t, db.Exec(`UPDATE idempotency_keys SET response_body =
			(SELECT response_body FROM idempotency_keys WHERE organization_id = ?) WHERE organization_id = ?`, org, other).Error)

		for _, r := range []response{
			f.do(t, "GET", "/api/v1/admin/integrations/slack", f.otherAdmin, "", nil),
			f.do(t, "POST", "/api/v1/admin/keys", f.otherAdmin, `{"name":"ci","kind":"admin"}`, once),
		} {
			assert.Equal(t, 500, r.status, string(r.body))
			assert.Equal(t, "internal_error", errField(r, "code"), "detail stays in the log")
			for _, secret := range []string{token, otherToken, made[f.adminKey], made[f.otherAdmin]} {
				assert.NotContains(t, string(r.body), secret)
			}
		}

		// The organisation they were copied from is untouched.
		r := f.do(t, "POST", "/api/v1/admin/keys", f.adminKey, `{"name":"ci","kind":"admin"}`, once)
		require.Equal(t, 201, r.status, string(r.body))
		assert.Equal(t, made[f.adminKey], r.decoded["key"])
	})
}
