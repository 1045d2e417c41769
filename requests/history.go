package requests

import (
	"context"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
)

// History is the settled requests of every kind, for the history page.
type History struct {
	store SettledReader
}

// SettledReader reads a person's settled requests of every kind.
type SettledReader interface {
	SettledFor(ctx context.Context, orgID, personID string, f models.HistoryFilter, p models.Page) ([]models.Settled, string, error)
}

// NewHistory returns the history over store.
func NewHistory(store SettledReader) *History {
	return &History{store: store}
}

// For pages through the settled requests of every kind (approvals,
// requests for information and reviews) a person was asked to act on or
// made in their organisation, the most recently settled first. A guest
// was asked, never made, so sees only what asked them. A filter outside
// the settled statuses and the two roles is refused, naming it.
func (h *History) For(ctx context.Context, who models.Actor, f models.HistoryFilter, p models.Page) ([]models.Settled, string, error) {
	if err := CheckStatus(f.Status, states.Settled); err != nil {
		return nil, "", err
	}
	if f.Role != "" && f.Role != models.RoleAsked && f.Role != models.RoleMade {
		return nil, "", apperr.Field(apperr.InvalidRequest, "role", "role must be asked or made")
	}
	return h.store.SettledFor(ctx, who.OrgID(), who.ID, f, p)
}
