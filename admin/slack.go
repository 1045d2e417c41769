package admin

import (
	"context"
	"regexp"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// SlackSettings is what an administrator sets on the organisation's Slack
// app; a nil field is kept, an empty one unsets it. Its tags are the
// limits for the REST body and the page's form alike.
type SlackSettings struct {
	// SigningSecret is the app's signing secret (Basic Information, App
	// Credentials).
	SigningSecret *string `json:"signingSecret" validate:"omitempty,max=200"`
	// BotToken is the app's Bot User OAuth Token, xoxb-….
	BotToken *string `json:"botToken" validate:"omitempty,max=400"`
	// Channel is where approval requests are posted: a channel id such as
	// C0123ABCD (or a name); empty posts none.
	Channel *string `json:"channel" validate:"omitempty,max=80"`
}

var (
	slackSecretForm  = regexp.MustCompile(`^[A-Za-z0-9]{16,200}$`)
	slackTokenForm   = regexp.MustCompile(`^xoxb-[A-Za-z0-9-]{10,395}$`)
	slackChannelForm = regexp.MustCompile(`^(#?[a-z0-9][a-z0-9._-]{0,79}|[CG][A-Z0-9]{2,40})$`)
)

// check refuses a value Slack never issues, naming the field.
func (in *SlackSettings) check() error {
	if err := validate.Struct(in); err != nil {
		return err
	}
	for _, f := range []struct {
		name, hint string
		v          *string
		form       *regexp.Regexp
	}{
		{"signingSecret", "the app's signing secret: letters and digits, from Basic Information", in.SigningSecret, slackSecretForm},
		{"botToken", "a bot token, xoxb-…, from OAuth & Permissions", in.BotToken, slackTokenForm},
		{"channel", "a channel id such as C0123ABCD, or a channel name", in.Channel, slackChannelForm},
	} {
		if f.v == nil {
			continue
		}
		// Spaces around a pasted value are dropped; a value of spaces alone
		// is a mistake, not the empty string that unsets the field.
		v := strings.TrimSpace(*f.v)
		if v == "" && *f.v != "" {
			return apperr.Field(apperr.InvalidRequest, f.name, "%s is blank: send an empty string to unset it, or %s", f.name, f.hint)
		}
		if *f.v = v; v != "" && !f.form.MatchString(v) {
			return apperr.Field(apperr.InvalidRequest, f.name, "%s must be %s", f.name, f.hint)
		}
	}
	return nil
}

// SlackApp is the organisation's Slack app with its secrets opened, or
// apperr.NotFound when none is connected.
func (s *Service) SlackApp(ctx context.Context, orgID string) (*models.SlackIntegration, error) {
	return s.store.SlackIntegration(ctx, orgID)
}

// SaveSlackApp connects the organisation's Slack app or changes it. The
// secrets are sealed at rest.
func (s *Service) SaveSlackApp(ctx context.Context, orgID string, by models.Actor, in SlackSettings) (*models.SlackIntegration, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	return s.store.PutSlackIntegration(ctx, orgID, by.ID, models.SlackChange{SigningSecret: in.SigningSecret,
		BotToken: in.BotToken, Channel: in.Channel})
}

// DisconnectSlackApp deletes the organisation's Slack app's settings.
func (s *Service) DisconnectSlackApp(ctx context.Context, orgID string) error {
	return s.store.DeleteSlackIntegration(ctx, orgID)
}
