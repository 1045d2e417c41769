package wire

import "github.com/assent-hq/assent/models"

// WebhookEndpoint is an endpoint on the wire; the secret appears once, in
// the create and rotate responses.
type WebhookEndpoint struct {
	ID                  string   `json:"id"`
	URL                 string   `json:"url"`
	Format              string   `json:"format"`
	Events              []string `json:"events"`
	Enabled             bool     `json:"enabled"`
	Secret              *string  `json:"secret,omitempty"`
	PreviousSecretUntil *Time    `json:"previousSecretValidUntil"`
	SwitchedOffAt       *Time    `json:"switchedOffAt"`
	ConsecutiveFailures int      `json:"consecutiveFailures"`
	LastError           string   `json:"lastError"`
	CreatedAt           Time     `json:"createdAt"`
	UpdatedAt           Time     `json:"updatedAt"`
}

// NewWebhookEndpoint serializes w without its secret.
func NewWebhookEndpoint(w *models.WebhookEndpoint) WebhookEndpoint {
	return WebhookEndpoint{ID: w.ID, URL: w.URL, Format: w.Format, Events: nonNil(w.Events), Enabled: w.Enabled,
		PreviousSecretUntil: TimePtr(w.PreviousSecretUntil), SwitchedOffAt: TimePtr(w.SwitchedOffAt),
		ConsecutiveFailures: w.ConsecutiveFailures, LastError: w.LastError,
		CreatedAt: Time(w.CreatedAt), UpdatedAt: Time(w.UpdatedAt)}
}
