package admin_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// The Slack app's settings: what Slack never issues is refused naming the
// field, a nil field keeps what is stored and an empty one unsets it, and
// disconnecting forgets them.
func TestSlackAppSettings(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := admin.New(store)
		o := testenv.NewPeople(t, store, "agent")
		by := o.Ada.Actor()

		_, err := svc.SlackApp(ctx, o.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "none connected: %v", err)

		for _, c := range []struct {
			field string
			in    admin.SlackSettings
		}{
			{"signingSecret", admin.SlackSettings{SigningSecret: new("not a secret!")}},
			{"botToken", admin.SlackSettings{BotToken: new("xoxp-a-user-token-000")}},
			{"channel", admin.SlackSettings{Channel: new("General Channel")}},
			// Blank is refused, not taken for the empty string that unsets.
			{"signingSecret", admin.SlackSettings{SigningSecret: new("   ")}},
			{"botToken", admin.SlackSettings{BotToken: new(" ")}},
			{"channel", admin.SlackSettings{Channel: new("\t")}},
		} {
			_, err := svc.SaveSlackApp(ctx, o.ID, by, c.in)
			testenv.Refused(t, err, apperr.InvalidRequest, c.field)
		}
		_, err = svc.SaveSlackApp(ctx, o.ID, by, admin.SlackSettings{BotToken: new("xoxb-" + strings.Repeat("1", 400))})
		testenv.Refused(t, err, apperr.InvalidRequest, "botToken")

		secret, token := strings.Repeat("a1", 16), "xoxb-1234567890-abcdef"
		saved, err := svc.SaveSlackApp(ctx, o.ID, by, admin.SlackSettings{SigningSecret: new(" " + secret + " "),
			BotToken: &token, Channel: new("C0123ABCD")})
		require.NoError(t, err)
		assert.Equal(t, secret, saved.SigningSecret, "trimmed")
		assert.True(t, saved.Interactive())
		assert.True(t, saved.Posts())

		saved, err = svc.SaveSlackApp(ctx, o.ID, by, admin.SlackSettings{Channel: new("")})
		require.NoError(t, err)
		assert.Equal(t, token, saved.BotToken, "a nil field keeps what is stored")
		assert.False(t, saved.Posts(), "an empty channel posts nothing")
		got, err := svc.SlackApp(ctx, o.ID)
		require.NoError(t, err)
		assert.Equal(t, secret, got.SigningSecret)
		assert.Equal(t, o.Ada.ID(), got.UpdatedBy)

		require.NoError(t, svc.DisconnectSlackApp(ctx, o.ID))
		_, err = svc.SlackApp(ctx, o.ID)
		assert.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	})
}
