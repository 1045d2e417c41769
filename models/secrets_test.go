package models_test

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/idempotency"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
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
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		oldKey, newKey := secretkey.Generate(), secretkey.Generate()
		before := models.NewStore(db, ringOf(t, oldKey))
		org := testenv.NewOrg(t, before)

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
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: org.ID, Title: "Pay", CallbackSecret: &secret,
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow,
			RequiredApprovals: 1}
		_, err = requests.Insert(ctx, before, approvals.Records(before), a, nil)
		require.NoError(t, err)

		claim := &models.Claim{OrganizationID: org.ID, PrincipalID: "key_x", Key: "k1", RequestHash: "h1"}
		_, err = idempotency.New(before).ClaimKey(ctx, claim, false)
		require.NoError(t, err)
		require.NoError(t, before.CompleteIdempotencyKey(ctx, claim, 201, "application/json", "", []byte(`{"key":"asnt_admin_x"}`)))

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

		stored, err := approvals.Records(newOnly).Get(ctx, org.ID, a.ID)
		require.NoError(t, err)
		require.NoError(t, approvals.Records(newOnly).Reveal(stored))
		assert.Equal(t, secret, *stored.CallbackSecret)

		prev, err := idempotency.New(newOnly).ClaimKey(ctx, claim, false)
		require.NoError(t, err)
		require.NotNil(t, prev)
		assert.JSONEq(t, `{"key":"asnt_admin_x"}`, string(prev.ResponseBody))
	})
}

// sealedWorld is one of each sealed value in two organisations, a and b,
// made by s: what the binding tests move between rows.
type sealedWorld struct {
	a, b               *models.Organization
	epA, epB           *models.WebhookEndpoint
	approvalA, approvB *approvals.Approval
	claimA, claimB     *models.Claim
}

func makeSealedWorld(t *testing.T, s *models.Store) *sealedWorld {
	t.Helper()
	ctx := context.Background()
	w := &sealedWorld{a: testenv.NewOrg(t, s), b: testenv.NewOrg(t, s)}
	endpoint := func(orgID, secret string) *models.WebhookEndpoint {
		ep, err := s.CreateWebhookEndpoint(ctx, orgID, models.NewWebhookEndpoint{URL: "https://hooks.example/" + orgID,
			Format: models.FormatJSON, Events: []string{"approval.approved"}, Enabled: true, Secret: secret + "_old"})
		require.NoError(t, err)
		ep, err = s.RotateWebhookSecret(ctx, orgID, ep.ID, secret, time.Now().Add(time.Hour))
		require.NoError(t, err)
		return ep
	}
	w.epA, w.epB = endpoint(w.a.ID, "whsec_a"), endpoint(w.b.ID, "whsec_b")
	approval := func(orgID, secret string) *approvals.Approval {
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: orgID, Title: "Pay", CallbackSecret: &secret,
			ExpiresAt: time.Now().Add(time.Hour), Requester: "key_x", RequestedBy: "agent"}, Risk: models.RiskLow,
			RequiredApprovals: 1}
		_, err := requests.Insert(ctx, s, approvals.Records(s), a, nil)
		require.NoError(t, err)
		return a
	}
	w.approvalA, w.approvB = approval(w.a.ID, "asnt_cbs_a"), approval(w.b.ID, "asnt_cbs_b")
	claim := func(orgID, body string) *models.Claim {
		c := &models.Claim{OrganizationID: orgID, PrincipalID: "key_x", Key: "k1", RequestHash: "h1"}
		_, err := idempotency.New(s).ClaimKey(ctx, c, false)
		require.NoError(t, err)
		require.NoError(t, s.CompleteIdempotencyKey(ctx, c, 201, "application/json", "", []byte(body)))
		return c
	}
	w.claimA, w.claimB = claim(w.a.ID, `{"key":"asnt_admin_a"}`), claim(w.b.ID, `{"key":"asnt_admin_b"}`)
	for _, org := range []*models.Organization{w.a, w.b} {
		signing, token := "signing_"+org.ID, "xoxb-"+org.ID
		_, err := s.PutSlackIntegration(ctx, org.ID, "key_x", models.SlackChange{SigningSecret: &signing, BotToken: &token})
		require.NoError(t, err)
		screenKey := "sk-" + org.ID
		_, err = s.PutModelScreen(ctx, org.ID, "key_x", models.ModelScreenChange{URL: "https://llm.example/v1/chat/completions",
			Model: "m", APIKey: &screenKey})
		require.NoError(t, err)
	}
	return w
}

// reads opens each sealed value of organisation b (and the instance's
// active decision key), as the service does.
func (w *sealedWorld) reads(s *models.Store) map[string]func() error {
	ctx := context.Background()
	return map[string]func() error{
		"webhook secrets": func() error {
			ep, err := s.GetWebhookEndpoint(ctx, w.b.ID, w.epB.ID)
			if err != nil {
				return err
			}
			_, err = s.WebhookSecrets(ep, time.Now())
			return err
		},
		"callback secret": func() error {
			a, err := approvals.Records(s).Get(ctx, w.b.ID, w.approvB.ID)
			if err != nil {
				return err
			}
			return approvals.Records(s).Reveal(a)
		},
		"stored response": func() error {
			_, err := idempotency.New(s).ClaimKey(ctx, w.claimB, false)
			return err
		},
		"slack app": func() error {
			_, err := s.SlackIntegration(ctx, w.b.ID)
			return err
		},
		"model screen": func() error {
			_, err := s.ModelScreen(ctx, w.b.ID)
			return err
		},
		"decision key": func() error {
			_, _, err := s.ActiveSigningKey(ctx, models.DecisionFamily)
			return err
		},
	}
}

// TestSealedValuesAreBoundToTheirRow: a sealed value copied by SQL into
// another row (another organisation's) or another column does not open
// there; the read fails with an error that names the row, not the secret.
func TestSealedValuesAreBoundToTheirRow(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, ringOf(t, secretkey.Generate()))
		moves := []struct {
			read, sql string
			args      func(w *sealedWorld, old, active string) []any
		}{
			{"webhook secrets", "UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = ?) WHERE id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.epA.ID, w.epB.ID} }},
			{"webhook secrets", "UPDATE webhook_endpoints SET previous_secret = (SELECT previous_secret FROM webhook_endpoints WHERE id = ?) WHERE id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.epA.ID, w.epB.ID} }},
			{"webhook secrets", "UPDATE webhook_endpoints SET previous_secret = secret WHERE id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.epB.ID} }},
			{"callback secret", "UPDATE approvals SET callback_secret = (SELECT callback_secret FROM approvals WHERE id = ?) WHERE id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.approvalA.ID, w.approvB.ID} }},
			{"stored response", "UPDATE idempotency_keys SET response_body = (SELECT response_body FROM idempotency_keys WHERE organization_id = ?) WHERE organization_id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.a.ID, w.b.ID} }},
			{"slack app", "UPDATE slack_integrations SET bot_token = (SELECT bot_token FROM slack_integrations WHERE organization_id = ?) WHERE organization_id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.a.ID, w.b.ID} }},
			{"slack app", "UPDATE slack_integrations SET signing_secret = (SELECT signing_secret FROM slack_integrations WHERE organization_id = ?) WHERE organization_id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.a.ID, w.b.ID} }},
			{"slack app", "UPDATE slack_integrations SET signing_secret = bot_token WHERE organization_id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.b.ID} }},
			{"model screen", "UPDATE model_screens SET api_key = (SELECT api_key FROM model_screens WHERE organization_id = ?) WHERE organization_id = ?",
				func(w *sealedWorld, _, _ string) []any { return []any{w.a.ID, w.b.ID} }},
			{"decision key", "UPDATE decision_keys SET private_key = (SELECT private_key FROM decision_keys WHERE id = ?) WHERE id = ?",
				func(_ *sealedWorld, old, active string) []any { return []any{old, active} }},
		}
		for _, m := range moves {
			w := makeSealedWorld(t, s)
			old, _, err := s.ActiveSigningKey(ctx, models.DecisionFamily)
			require.NoError(t, err)
			active, err := s.RotateSigningKey(ctx, models.DecisionFamily)
			require.NoError(t, err)
			read := w.reads(s)[m.read]
			require.NoError(t, read(), "%s opens in its own row", m.read)

			require.NoError(t, db.Exec(m.sql, m.args(w, old.ID, active.ID)...).Error, m.sql)
			err = read()
			require.ErrorIs(t, err, secretkey.ErrMisplaced, m.sql)
			for _, secret := range []string{"whsec_a", "asnt_cbs_a", "asnt_admin_a", "xoxb-" + w.a.ID, "signing_" + w.a.ID, "sk-" + w.a.ID} {
				assert.NotContains(t, err.Error(), secret, "the error names the row, not the secret")
			}
		}
	})
}

// TestUnboundValuesOpenUntilResealed: values sealed before they were bound
// to their rows (v1) still open where they are; re-sealing (`assent admin
// rotate-secret-key`, `assent migrate`) binds each to the row it is in,
// with or without a new key. Once the key that sealed them leaves the
// ring, no unbound value opens anywhere.
func TestUnboundValuesOpenUntilResealed(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		oldKey, newKey := secretkey.Generate(), secretkey.Generate()
		oldRing := ringOf(t, oldKey)
		before := models.NewStore(db, oldRing)
		w := makeSealedWorld(t, before)
		_, private, err := before.ActiveSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)

		// Organisation b's values as the previous version sealed them: for
		// their column's purpose only.
		b := w.b.ID
		legacy := []struct{ sql, purpose, plain string }{
			{"UPDATE webhook_endpoints SET secret = ? WHERE organization_id = ?", "webhook_endpoints.secret", "whsec_b"},
			{"UPDATE webhook_endpoints SET previous_secret = ? WHERE organization_id = ?", "webhook_endpoints.secret", "whsec_b_old"},
			{"UPDATE approvals SET callback_secret = ? WHERE organization_id = ?", "callback_secret", "asnt_cbs_b"},
			{"UPDATE slack_integrations SET bot_token = ? WHERE organization_id = ?", "slack_integrations.bot_token", "xoxb-" + b},
			{"UPDATE slack_integrations SET signing_secret = ? WHERE organization_id = ?", "slack_integrations.signing_secret", "signing_" + b},
		}
		for _, l := range legacy {
			require.NoError(t, db.Exec(l.sql, oldRing.Seal(l.purpose, l.plain), b).Error)
		}
		require.NoError(t, db.Exec("UPDATE idempotency_keys SET response_body = ? WHERE organization_id = ?",
			[]byte(oldRing.Seal("idempotency_keys.response_body", `{"key":"asnt_admin_b"}`)), b).Error)
		require.NoError(t, db.Exec("UPDATE decision_keys SET private_key = ?",
			oldRing.Seal("decision_keys.private_key", base64.StdEncoding.EncodeToString(private.Seed()))).Error)

		for name, read := range w.reads(before) {
			require.NoError(t, read(), "%s: an unbound value still opens", name)
		}

		// Re-sealing under the same key binds exactly the unbound values.
		n, err := before.ResealSecrets(ctx)
		require.NoError(t, err)
		assert.Equal(t, len(legacy)+2, n)
		for _, col := range []struct{ table, column string }{{"webhook_endpoints", "secret"}, {"webhook_endpoints", "previous_secret"},
			{"approvals", "callback_secret"}, {"idempotency_keys", "response_body"}, {"slack_integrations", "bot_token"},
			{"slack_integrations", "signing_secret"}, {"decision_keys", "private_key"}} {
			var unbound int64
			require.NoError(t, db.Table(col.table).Where(col.column+" IS NOT NULL AND "+col.column+" NOT LIKE 'v2.%'").Count(&unbound).Error)
			assert.Zero(t, unbound, "%s.%s: every value is bound", col.table, col.column)
		}

		// The rotation re-seals the rest under the new key; then only the
		// new key is needed and every value opens, in its own row.
		rotating := models.NewStore(db, ringOf(t, newKey+","+oldKey))
		_, err = rotating.ResealSecrets(ctx)
		require.NoError(t, err)
		newOnly := models.NewStore(db, ringOf(t, newKey))
		for name, read := range w.reads(newOnly) {
			require.NoError(t, read(), "%s opens under the new key alone", name)
		}
		slack, err := newOnly.SlackIntegration(ctx, b)
		require.NoError(t, err)
		assert.Equal(t, "xoxb-"+b, slack.BotToken)
		prev, err := idempotency.New(newOnly).ClaimKey(ctx, w.claimB, false)
		require.NoError(t, err)
		assert.JSONEq(t, `{"key":"asnt_admin_b"}`, string(prev.ResponseBody))

		// An unbound value kept from before (a backup) and copied into b's
		// row no longer opens: the key that sealed it is gone.
		require.NoError(t, db.Exec("UPDATE slack_integrations SET bot_token = ? WHERE organization_id = ?",
			oldRing.Seal("slack_integrations.bot_token", "xoxb-"+w.a.ID), b).Error)
		_, err = newOnly.SlackIntegration(ctx, b)
		assert.ErrorIs(t, err, secretkey.ErrUnknownKey)
	})
}
