package admin

import (
	"context"
	"strings"
	"unicode"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// ModelScreenSettings switch the organisation's model screen on or change
// it: an OpenAI-compatible chat-completions endpoint and the model it
// serves, which read each new approval (restricted fields removed)
// against the organisation's ethics principles. Its tags are the limits
// for the REST body and the page's form alike.
type ModelScreenSettings struct {
	// URL is the chat-completions endpoint itself, such as
	// https://api.openai.com/v1/chat/completions.
	URL   string `json:"url" validate:"required,max=2048"`
	Model string `json:"model" validate:"required,notblank,max=200"`
	// APIKey is sent as a bearer token, sealed at rest and never shown
	// again; nil keeps the stored one, "" removes it (an endpoint that
	// takes none).
	APIKey *string `json:"apiKey" validate:"omitempty,max=1000"`
}

// WithNetPolicy holds the model screen's endpoint to p, the policy its
// requests are sent under; it returns s. Without it, netguard.Public.
func (s *Service) WithNetPolicy(p *netguard.Policy) *Service {
	s.netPolicy = p
	return s
}

// ModelScreen is the organisation's model screen, its key opened, or nil
// when it is off.
func (s *Service) ModelScreen(ctx context.Context, orgID string) (*models.ModelScreen, error) {
	m, err := s.store.Directory().ModelScreen(ctx, orgID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil
	}
	return m, err
}

// SaveModelScreen switches the organisation's model screen on or changes
// it. The endpoint is held to the policy deliveries are sent under; the
// key is sealed at rest.
func (s *Service) SaveModelScreen(ctx context.Context, orgID string, by models.Actor, in ModelScreenSettings) (*models.ModelScreen, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, err
	}
	in.URL, in.Model = strings.TrimSpace(in.URL), strings.TrimSpace(in.Model)
	policy := s.netPolicy
	if policy == nil {
		policy = netguard.Public
	}
	if err := policy.CheckURL(ctx, in.URL); err != nil {
		return nil, apperr.Field(apperr.InvalidRequest, "url", "url: %v", err)
	}
	if strings.ContainsFunc(in.Model, unicode.IsControl) {
		return nil, apperr.Field(apperr.InvalidRequest, "model", "model must be a model's name, such as gpt-4o-mini, without control characters")
	}
	if in.APIKey != nil {
		*in.APIKey = strings.TrimSpace(*in.APIKey)
		if strings.ContainsFunc(*in.APIKey, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) {
			return nil, apperr.Field(apperr.InvalidRequest, "apiKey", "apiKey must be the key as the provider issued it, without spaces")
		}
	}
	return s.store.Directory().PutModelScreen(ctx, orgID, by.ID, models.ModelScreenChange{URL: in.URL, Model: in.Model, APIKey: in.APIKey})
}

// DisableModelScreen switches the organisation's model screen off and
// deletes its key. Approvals already screened keep their concerns.
func (s *Service) DisableModelScreen(ctx context.Context, orgID string) error {
	return s.store.Directory().DeleteModelScreen(ctx, orgID)
}
