package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// ModelScreen is an organisation's model screen as administrators see it:
// whether its API key is set, never the key.
type ModelScreen struct {
	Enabled   bool           `json:"enabled"`
	URL       *string        `json:"url"`
	Model     *string        `json:"model"`
	APIKeySet bool           `json:"apiKeySet"`
	UpdatedAt *wiretime.Time `json:"updatedAt"`
}

// NewModelScreen serializes m (nil: off).
func NewModelScreen(m *models.ModelScreen) ModelScreen {
	if m == nil {
		return ModelScreen{}
	}
	return ModelScreen{Enabled: true, URL: &m.URL, Model: &m.Model, APIKeySet: m.APIKey != "", UpdatedAt: wiretime.Ptr(&m.UpdatedAt)}
}
