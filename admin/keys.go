package admin

import (
	"context"
	"slices"
	"strings"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
)

// NewKey is an agent or admin key to issue.
type NewKey struct {
	Name   string   `json:"name" validate:"required,max=200"`
	Kind   string   `json:"kind" validate:"required,oneof=agent admin"`
	Scopes []string `json:"scopes" validate:"max=50"`
}

// CreateKey issues the key and returns its secret, which is never stored
// and cannot be shown again. An agent key needs known scopes, each kept
// once; an admin key manages the organisation and carries none.
func (s *Service) CreateKey(ctx context.Context, orgID string, in NewKey) (*models.APIKey, string, error) {
	if err := validate.Struct(&in); err != nil {
		return nil, "", err
	}
	var keyScopes []string
	switch in.Kind {
	case models.KeyAgent:
		if len(in.Scopes) == 0 {
			return nil, "", apperr.Field(apperr.InvalidRequest, "scopes", "an agent key needs at least one scope")
		}
		for _, sc := range in.Scopes {
			if !scopes.Valid(sc) {
				return nil, "", apperr.Field(apperr.InvalidRequest, "scopes", "unknown scope %q; known scopes: %s", sc, strings.Join(scopes.All, ", "))
			}
			if !slices.Contains(keyScopes, sc) {
				keyScopes = append(keyScopes, sc)
			}
		}
	case models.KeyAdmin:
		if len(in.Scopes) > 0 {
			return nil, "", apperr.Field(apperr.InvalidRequest, "scopes", "admin keys manage the organisation and carry no scopes")
		}
	}
	return s.store.CreateKey(ctx, orgID, in.Name, in.Kind, keyScopes)
}
