package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// sealModelScreenKey is the purpose the model screen's API key is sealed
// for.
const sealModelScreenKey = "model_screens.api_key"

// ScreenRule is the rule a concern the model screen raised names, beside
// the ethics rules' own names: how the pages and the API tell it apart.
// No organisation rule may take this name (admin.NewRule.Check).
const ScreenRule = "model screen"

// ModelScreen is an organisation's model screen: a language model behind
// an OpenAI-compatible chat-completions endpoint that reads each new
// approval, without its restricted fields, against the organisation's
// ethics principles. Its API key is sealed; "" is none. No row is off,
// the default.
type ModelScreen struct {
	OrganizationID string `gorm:"primaryKey;size:40"`
	// URL is the chat-completions endpoint, such as
	// https://api.openai.com/v1/chat/completions.
	URL   string `gorm:"size:2048;not null"`
	Model string `gorm:"size:200;not null"`
	// APIKey is sent as a bearer token; sealed at rest, opened on read.
	APIKey    string `gorm:"type:text;not null"`
	UpdatedBy string `gorm:"size:40;not null"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ModelScreenChange is what an administrator sets; a nil APIKey keeps the
// stored one, "" removes it.
type ModelScreenChange struct {
	URL, Model string
	APIKey     *string
}

// ModelScreen returns the organisation's model screen with its key
// opened, or a NotFound error when it has none (the screen is off).
func (s *DirectoryStore) ModelScreen(ctx context.Context, orgID string) (*ModelScreen, error) {
	return s.modelScreen(s.db.WithContext(ctx), orgID)
}

func (s *DirectoryStore) modelScreen(db *gorm.DB, orgID string) (*ModelScreen, error) {
	var m ModelScreen
	if err := db.Where("organization_id = ?", orgID).Take(&m).Error; err != nil {
		return nil, notFound(err, "the model screen")
	}
	var err error
	if m.APIKey, err = s.openOptional(colModelScreenKey, m.APIKey, orgID); err != nil {
		return nil, err
	}
	return &m, nil
}

// ModelScreenOn says whether the organisation screens its new approvals.
func (s *DirectoryStore) ModelScreenOn(ctx context.Context, orgID string) (bool, error) {
	return s.settings.screenOn.get(ctx, orgID, func() (bool, error) {
		var n int64
		err := s.db.WithContext(ctx).Model(&ModelScreen{}).Where("organization_id = ?", orgID).Count(&n).Error
		return n > 0, err
	})
}

// PutModelScreen switches the organisation's model screen on or changes
// it, and returns it as stored, its key opened.
func (s *DirectoryStore) PutModelScreen(ctx context.Context, orgID, by string, ch ModelScreenChange) (*ModelScreen, error) {
	var out *ModelScreen
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		// The row exists before it is locked, so two first saves queue.
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&ModelScreen{OrganizationID: orgID,
			URL: ch.URL, Model: ch.Model, UpdatedBy: by, CreatedAt: now, UpdatedAt: now}).Error; err != nil {
			return err
		}
		var row ModelScreen
		if err := tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ?", orgID).Take(&row).Error; err != nil {
			return err
		}
		upd := map[string]any{"url": ch.URL, "model": ch.Model, "updated_by": by, "updated_at": now}
		if ch.APIKey != nil {
			upd["api_key"] = s.sealOptional(colModelScreenKey, *ch.APIKey, orgID)
		}
		if err := tx.Model(&ModelScreen{}).Where("organization_id = ?", orgID).Updates(upd).Error; err != nil {
			return err
		}
		var err error
		out, err = s.modelScreen(tx, orgID)
		return err
	})
	return out, err
}

// DeleteModelScreen switches the organisation's model screen off and
// deletes its key. One already off stays off.
func (s *DirectoryStore) DeleteModelScreen(ctx context.Context, orgID string) error {
	err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Delete(&ModelScreen{}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil
	}
	return err
}
