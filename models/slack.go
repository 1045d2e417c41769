package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// The purposes the Slack app's signing secret and bot token are sealed
// for.
const (
	sealSlackSigningSecret = "slack_integrations.signing_secret"
	sealSlackBotToken      = "slack_integrations.bot_token"
)

// SlackIntegration is an organisation's own Slack app, connected by an
// administrator: the signing secret Slack signs its interaction requests
// with, the bot token Assent calls Slack's Web API with (users.info,
// chat.postMessage, views.open), and the channel approval messages are
// posted to. The two secrets are sealed; "" is unset. One per
// organisation.
type SlackIntegration struct {
	OrganizationID string `gorm:"primaryKey;size:40"`
	SigningSecret  string `gorm:"type:text;not null"`
	BotToken       string `gorm:"type:text;not null"`
	// Channel is a channel id (or name) chat.postMessage posts approval
	// requests to; "" posts nothing.
	Channel   string `gorm:"size:80;not null"`
	UpdatedBy string `gorm:"size:40;not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Interactive says whether Slack messages may carry decision buttons: a
// click is verified with the signing secret and its person looked up with
// the bot token, so both must be set.
func (s *SlackIntegration) Interactive() bool { return s.SigningSecret != "" && s.BotToken != "" }

// Posts says whether approval requests are posted to a channel.
func (s *SlackIntegration) Posts() bool { return s.BotToken != "" && s.Channel != "" }

// SlackChange is what an administrator sets; a nil field is kept.
type SlackChange struct {
	SigningSecret, BotToken, Channel *string
}

// SlackIntegration returns the organisation's Slack app with its secrets
// opened, or a NotFound error when none is connected.
func (s *SlackStore) SlackIntegration(ctx context.Context, orgID string) (*SlackIntegration, error) {
	return s.slackIntegration(s.db.WithContext(ctx), orgID)
}

func (s *SlackStore) slackIntegration(db *gorm.DB, orgID string) (*SlackIntegration, error) {
	var in SlackIntegration
	if err := db.Where("organization_id = ?", orgID).Take(&in).Error; err != nil {
		return nil, notFound(err, "the Slack integration")
	}
	var err error
	if in.SigningSecret, err = s.openOptional(colSlackSigningSecret, in.SigningSecret, orgID); err != nil {
		return nil, err
	}
	if in.BotToken, err = s.openOptional(colSlackBotToken, in.BotToken, orgID); err != nil {
		return nil, err
	}
	return &in, nil
}

// openOptional is open for a column where "" is unset.
func (s *core) openOptional(c sealedColumn, sealed string, row ...string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	return s.open(c, sealed, row...)
}

// sealOptional is seal for a column where "" is unset.
func (s *core) sealOptional(c sealedColumn, plain string, row ...string) string {
	if plain == "" {
		return ""
	}
	return s.seal(c, plain, row...)
}

// PutSlackIntegration connects the organisation's Slack app or changes
// it: each field set in ch replaces the stored one ("" unsets it), the
// others are kept. It returns the integration as stored, secrets opened.
func (s *SlackStore) PutSlackIntegration(ctx context.Context, orgID, by string, ch SlackChange) (*SlackIntegration, error) {
	var out *SlackIntegration
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		// The row exists before it is locked, so two first saves queue.
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&SlackIntegration{OrganizationID: orgID,
			UpdatedBy: by, CreatedAt: now, UpdatedAt: now}).Error; err != nil {
			return err
		}
		var row SlackIntegration
		if err := tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ?", orgID).Take(&row).Error; err != nil {
			return err
		}
		upd := map[string]any{"updated_by": by, "updated_at": now}
		if ch.SigningSecret != nil {
			upd["signing_secret"] = s.sealOptional(colSlackSigningSecret, *ch.SigningSecret, orgID)
		}
		if ch.BotToken != nil {
			upd["bot_token"] = s.sealOptional(colSlackBotToken, *ch.BotToken, orgID)
		}
		if ch.Channel != nil {
			upd["channel"] = *ch.Channel
		}
		if err := tx.Model(&SlackIntegration{}).Where("organization_id = ?", orgID).Updates(upd).Error; err != nil {
			return err
		}
		var err error
		out, err = s.slackIntegration(tx, orgID)
		return err
	})
	return out, err
}

// DeleteSlackIntegration disconnects the organisation's Slack app: its
// secrets are deleted, and Slack messages go back to a link only. One not
// connected is already disconnected.
func (s *SlackStore) DeleteSlackIntegration(ctx context.Context, orgID string) error {
	return s.db.WithContext(ctx).Where("organization_id = ?", orgID).Delete(&SlackIntegration{}).Error
}

// slackInteractive says whether the organisation's Slack messages may
// carry decision buttons, in db (a delivery's read).
func slackInteractive(db *gorm.DB, orgID string) (bool, error) {
	var row SlackIntegration
	err := db.Select("signing_secret, bot_token").Where("organization_id = ?", orgID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	// Sealed or not, a value is set when it is not empty.
	return err == nil && row.Interactive(), err
}

// slackPosts says whether the organisation posts approval requests to a
// Slack channel (the delivery target TargetSlack).
func slackPosts(db *gorm.DB, orgID string) (bool, error) {
	var row SlackIntegration
	err := db.Select("bot_token, channel").Where("organization_id = ?", orgID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	return err == nil && row.Posts(), err
}

// ActiveMemberByEmail returns the organisation's active member with this
// email, or a NotFound error: how a person known to another system (Slack)
// is matched to a member.
func (s *DirectoryStore) ActiveMemberByEmail(ctx context.Context, orgID, email string) (*Member, error) {
	var m Member
	err := s.db.WithContext(ctx).Where("organization_id = ? AND email = ? AND active", orgID, NormalizeEmail(email)).Take(&m).Error
	return &m, notFound(err, "member")
}
