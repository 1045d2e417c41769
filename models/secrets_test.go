package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func ringOf(t *testing.T, keys string) *secretkey.Ring {
	t.Helper()
	r, err := secretkey.Parse(keys)
	require.NoError(t, err)
	return r
}

// TestRotateSecretKey: secrets sealed under the old key stay readable while
// it is in the ring; re-sealing moves every one (and any value an earlier
// version kept in clear) under the new key, after which the old key can go.
func TestRotateSecretKey(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		oldKey, newKey := secretkey.Generate(), secretkey.Generate()
		before := models.NewStore(db, ringOf(t, oldKey))
		org := newOrg(t, before)

		ep, err := before.CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: "https://hooks.example/a",
			Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: "whsec_one"})
		require.NoError(t, err)
		_, err = before.RotateWebhookSecret(ctx, org.ID, ep.ID, "whsec_two", time.Now().Add(time.Hour))
		require.NoError(t, err)
		legacy, err := before.CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: "https://hooks.example/b",
			Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: "unused"})
		require.NoError(t, err)
		// As an earlier version kept it: in clear.
		require.NoError(t, db.Exec("UPDATE webhook_endpoints SET secret = ? WHERE id = ?", "whsec_clear", legacy.ID).Error)

		secret := "asnt_cbs_callback"
		a := &models.Approval{OrganizationID: org.ID, Title: "Pay", Risk: models.RiskLow, CallbackSecret: &secret,
			ExpiresAt: time.Now().Add(time.Hour), RequiredApprovals: 1, Requester: "key_x", RequestedBy: "agent"}
		_, err = before.CreateApproval(ctx, a, nil)
		require.NoError(t, err)

		claim := &models.Claim{OrganizationID: org.ID, PrincipalID: "key_x", Key: "k1", RequestHash: "h1"}
		_, err = before.ClaimIdempotencyKey(ctx, claim, false)
		require.NoError(t, err)
		require.NoError(t, before.CompleteIdempotencyKey(ctx, claim, 201, "application/json", []byte(`{"key":"asnt_admin_x"}`)))

		var raw []byte
		require.NoError(t, db.Raw("SELECT response_body FROM idempotency_keys").Row().Scan(&raw))
		assert.NotContains(t, string(raw), "asnt_admin_x", "the stored response is sealed")

		// Only the new key: nothing sealed under the old one opens.
		newOnly := models.NewStore(db, ringOf(t, newKey))
		_, err = newOnly.WebhookSecrets(ep, time.Now())
		assert.ErrorIs(t, err, secretkey.ErrUnknownKey)

		// The new key first, the old one kept: everything still opens.
		rotating := models.NewStore(db, ringOf(t, newKey+","+oldKey))
		n, err := rotating.ResealSecrets(ctx)
		require.NoError(t, err)
		assert.Equal(t, 5, n, "current and previous webhook secret, the one in clear, the callback secret, the stored response")
		n, err = rotating.ResealSecrets(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "a second run has nothing left to do")

		// Now the old key can go.
		got, err := newOnly.GetWebhookEndpoint(ctx, org.ID, ep.ID)
		require.NoError(t, err)
		secrets, err := newOnly.WebhookSecrets(got, time.Now())
		require.NoError(t, err)
		assert.Equal(t, []string{"whsec_two", "whsec_one"}, secrets)
		got, err = newOnly.GetWebhookEndpoint(ctx, org.ID, legacy.ID)
		require.NoError(t, err)
		secrets, err = newOnly.WebhookSecrets(got, time.Now())
		require.NoError(t, err)
		assert.Equal(t, []string{"whsec_clear"}, secrets)

		stored, err := newOnly.GetApproval(ctx, org.ID, a.ID)
		require.NoError(t, err)
		require.NoError(t, newOnly.RevealCallbackSecret(stored))
		assert.Equal(t, secret, *stored.CallbackSecret)

		prev, err := newOnly.ClaimIdempotencyKey(ctx, claim, false)
		require.NoError(t, err)
		require.NotNil(t, prev)
		assert.JSONEq(t, `{"key":"asnt_admin_x"}`, string(prev.ResponseBody))
	})
}
