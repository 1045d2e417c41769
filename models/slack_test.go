package models_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestSlackIntegrationSealed: the Slack app's secrets are sealed at rest,
// a field left out is kept and an empty one unsets it, and re-sealing
// covers them.
func TestSlackIntegrationSealed(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		_, err = s.SlackIntegration(ctx, org.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound))

		secret, token, channel := "8f742231b10e8888abcd99yyyzzz85a5", "xoxb-1-2-secret", "C0123"
		in, err := s.PutSlackIntegration(ctx, org.ID, "key_1", models.SlackChange{SigningSecret: &secret, BotToken: &token, Channel: &channel})
		require.NoError(t, err)
		assert.Equal(t, secret, in.SigningSecret)
		assert.True(t, in.Interactive())
		assert.True(t, in.Posts())

		var raw struct{ SigningSecret, BotToken string }
		require.NoError(t, db.Table("slack_integrations").Where("organization_id = ?", org.ID).Take(&raw).Error)
		assert.NotContains(t, raw.SigningSecret, secret)
		assert.NotContains(t, raw.BotToken, "secret")
		assert.NotEmpty(t, raw.BotToken)

		empty := ""
		in, err = s.PutSlackIntegration(ctx, org.ID, "key_1", models.SlackChange{Channel: &empty})
		require.NoError(t, err)
		assert.Equal(t, token, in.BotToken, "kept")
		assert.False(t, in.Posts())
		in, err = s.PutSlackIntegration(ctx, org.ID, "key_1", models.SlackChange{BotToken: &empty})
		require.NoError(t, err)
		assert.Empty(t, in.BotToken)
		assert.False(t, in.Interactive())

		_, err = s.ResealSecrets(ctx)
		require.NoError(t, err)
		in, err = s.SlackIntegration(ctx, org.ID)
		require.NoError(t, err)
		assert.Equal(t, secret, in.SigningSecret)

		require.NoError(t, s.DeleteSlackIntegration(ctx, org.ID))
		require.NoError(t, s.DeleteSlackIntegration(ctx, org.ID), "already disconnected")
		_, err = s.SlackIntegration(ctx, org.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound))
	})
}

// TestModelScreenSealed: the model screen's key is sealed at rest, kept
// when a change leaves it out and removed by an empty one; off (no row)
// by default and after DeleteModelScreen.
func TestModelScreenSealed(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org, err := s.CreateOrganization(ctx, "Acme", "")
		require.NoError(t, err)
		on, err := s.ModelScreenOn(ctx, org.ID)
		require.NoError(t, err)
		assert.False(t, on, "off by default")
		_, err = s.ModelScreen(ctx, org.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound))

		key := "sk-live-secret-123"
		m, err := s.PutModelScreen(ctx, org.ID, "key_1", models.ModelScreenChange{URL: "https://llm.example/v1/chat/completions", Model: "gpt-x", APIKey: &key})
		require.NoError(t, err)
		assert.Equal(t, key, m.APIKey)
		var raw struct{ APIKey string }
		require.NoError(t, db.Table("model_screens").Where("organization_id = ?", org.ID).Take(&raw).Error)
		assert.NotContains(t, raw.APIKey, "secret")
		assert.NotEmpty(t, raw.APIKey)

		m, err = s.PutModelScreen(ctx, org.ID, "key_1", models.ModelScreenChange{URL: "https://llm.example/v1/chat/completions", Model: "gpt-y"})
		require.NoError(t, err)
		assert.Equal(t, key, m.APIKey, "kept")
		assert.Equal(t, "gpt-y", m.Model)
		_, err = s.ResealSecrets(ctx)
		require.NoError(t, err)
		m, err = s.ModelScreen(ctx, org.ID)
		require.NoError(t, err)
		assert.Equal(t, key, m.APIKey)
		empty := ""
		m, err = s.PutModelScreen(ctx, org.ID, "key_1", models.ModelScreenChange{URL: m.URL, Model: m.Model, APIKey: &empty})
		require.NoError(t, err)
		assert.Empty(t, m.APIKey)

		require.NoError(t, s.DeleteModelScreen(ctx, org.ID))
		require.NoError(t, s.DeleteModelScreen(ctx, org.ID), "already off")
		on, err = s.ModelScreenOn(ctx, org.ID)
		require.NoError(t, err)
		assert.False(t, on)
	})
}
