package models

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
)

// Webhook formats, as the events package encodes them.
const (
	FormatJSON  = events.FormatJSON
	FormatSlack = events.FormatSlack
	FormatTeams = events.FormatTeams
)

// SwitchOffAfter is how many consecutive failed attempts switch an
// endpoint off.
const SwitchOffAfter = 20

// WebhookEndpoint is an organisation's receiver of events.
type WebhookEndpoint struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	// URL is a credential for Slack and Teams: never log it in full.
	URL    string     `gorm:"type:text;not null"`
	Format string     `gorm:"size:20;not null"`
	Events StringList `gorm:"type:text;not null"`
	// Enabled is the administrator's switch.
	Enabled bool `gorm:"not null"`
	// Secret is set only on the endpoint a create or a rotation returns,
	// to be shown once; the database keeps it sealed.
	Secret       string `gorm:"-"`
	SealedSecret string `gorm:"column:secret;type:text;not null"`
	// The previous secret still signs until PreviousSecretUntil (a rotation).
	SealedPreviousSecret *string `gorm:"column:previous_secret;type:text"`
	PreviousSecretUntil  *time.Time
	ConsecutiveFailures  int `gorm:"not null"`
	// SwitchedOffAt is set after SwitchOffAfter consecutive failures.
	SwitchedOffAt *time.Time
	LastError     string `gorm:"type:text;not null"`
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// WebhookSecrets are the secrets that sign a delivery to w sent at now.
func (s *DeliveryStore) WebhookSecrets(w *WebhookEndpoint, now time.Time) ([]string, error) {
	current, err := s.open(colWebhookSecret, w.SealedSecret, w.ID)
	if err != nil {
		return nil, err
	}
	out := []string{current}
	if w.SealedPreviousSecret != nil && w.PreviousSecretUntil != nil && now.Before(*w.PreviousSecretUntil) {
		previous, err := s.open(colWebhookPreviousSecret, *w.SealedPreviousSecret, w.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, previous)
	}
	return out, nil
}

// NewWebhookEndpoint is what CreateWebhookEndpoint stores.
type NewWebhookEndpoint struct {
	URL     string
	Format  string
	Events  []string
	Enabled bool
	Secret  string
}

// CreateWebhookEndpoint saves an endpoint.
func (s *DeliveryStore) CreateWebhookEndpoint(ctx context.Context, orgID string, in NewWebhookEndpoint) (*WebhookEndpoint, error) {
	now := Now()
	ep := &WebhookEndpoint{ID: newID(ids.Webhook), OrganizationID: orgID, URL: in.URL, Format: in.Format,
		Events: append(StringList{}, in.Events...), Enabled: in.Enabled, Secret: in.Secret, CreatedAt: now, UpdatedAt: now}
	ep.SealedSecret = s.seal(colWebhookSecret, in.Secret, ep.ID)
	return ep, s.db.WithContext(ctx).Create(ep).Error
}

// GetWebhookEndpoint returns one of the organisation's endpoints.
func (s *DeliveryStore) GetWebhookEndpoint(ctx context.Context, orgID, id string) (*WebhookEndpoint, error) {
	return take[WebhookEndpoint](s.conn(ctx), orgID, id, "webhook endpoint "+id)
}

// ListWebhookEndpoints pages through the organisation's endpoints.
func (s *DeliveryStore) ListWebhookEndpoints(ctx context.Context, orgID string, p Page) ([]WebhookEndpoint, string, error) {
	return list(s.db.WithContext(ctx).Where("organization_id = ?", orgID), p, ids.Webhook, func(w *WebhookEndpoint) string { return w.ID })
}

// LockWebhookEndpoint reads the organisation's endpoint id under its row
// lock, for the rest of ctx's transaction.
func (s *DeliveryStore) LockWebhookEndpoint(ctx context.Context, orgID, id string) (*WebhookEndpoint, error) {
	return lockedIn[WebhookEndpoint](ctx, orgID, id, "webhook endpoint "+id)
}

// SaveWebhookEndpoint writes ep's changes, in ctx's transaction.
func (s *DeliveryStore) SaveWebhookEndpoint(ctx context.Context, ep *WebhookEndpoint) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	ep.UpdatedAt = Now()
	return st.tx.Save(ep).Error
}

// RotateWebhookSecret makes secret the signing secret; the old one keeps
// signing too until until, sealed again for its new column. An old secret
// that does not open signs nothing, so none is kept: the rotation repairs it.
func (s *DeliveryStore) RotateWebhookSecret(ctx context.Context, orgID, id, secret string, until time.Time) (*WebhookEndpoint, error) {
	return s.changeWebhookEndpoint(ctx, orgID, id, func(ep *WebhookEndpoint) {
		ep.SealedPreviousSecret, ep.PreviousSecretUntil = nil, nil
		if old, err := s.open(colWebhookSecret, ep.SealedSecret, ep.ID); err == nil {
			previous := s.seal(colWebhookPreviousSecret, old, ep.ID)
			ep.SealedPreviousSecret, ep.PreviousSecretUntil = &previous, &until
		}
		ep.Secret, ep.SealedSecret = secret, s.seal(colWebhookSecret, secret, ep.ID)
	})
}

func (s *DeliveryStore) changeWebhookEndpoint(ctx context.Context, orgID, id string, change func(*WebhookEndpoint)) (*WebhookEndpoint, error) {
	var ep *WebhookEndpoint
	err := s.Tx(ctx, func(ctx context.Context) error {
		var err error
		if ep, err = s.LockWebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		change(ep)
		return s.SaveWebhookEndpoint(ctx, ep)
	})
	return ep, err
}

// DeleteWebhookEndpoint removes an endpoint; its delivery log stays.
func (s *DeliveryStore) DeleteWebhookEndpoint(ctx context.Context, orgID, id string) error {
	return remove[WebhookEndpoint](s.db.WithContext(ctx), orgID, id, "webhook endpoint "+id)
}
