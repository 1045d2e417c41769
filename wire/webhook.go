package wire

import (
	"net/url"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// WebhookEndpoint is an endpoint on the wire; the secret appears once, in
// the create and rotate responses.
type WebhookEndpoint struct {
	ID                  string         `json:"id"`
	URL                 string         `json:"url"`
	Format              string         `json:"format"`
	Events              []string       `json:"events"`
	Enabled             bool           `json:"enabled"`
	Secret              *string        `json:"secret,omitempty"`
	PreviousSecretUntil *wiretime.Time `json:"previousSecretValidUntil"`
	SwitchedOffAt       *wiretime.Time `json:"switchedOffAt"`
	ConsecutiveFailures int            `json:"consecutiveFailures"`
	LastError           string         `json:"lastError"`
	CreatedAt           wiretime.Time  `json:"createdAt"`
	UpdatedAt           wiretime.Time  `json:"updatedAt"`
}

// NewWebhookEndpoint serializes w without its secret. A Slack or Teams
// address is itself a credential, so only its host is shown.
func NewWebhookEndpoint(w *models.WebhookEndpoint) WebhookEndpoint {
	addr := w.URL
	if w.Format != models.FormatJSON {
		addr = RedactURL(addr)
	}
	return WebhookEndpoint{ID: w.ID, URL: addr, Format: w.Format, Events: NonNil(w.Events), Enabled: w.Enabled,
		PreviousSecretUntil: wiretime.Ptr(w.PreviousSecretUntil), SwitchedOffAt: wiretime.Ptr(w.SwitchedOffAt),
		ConsecutiveFailures: w.ConsecutiveFailures, LastError: w.LastError,
		CreatedAt: wiretime.New(w.CreatedAt), UpdatedAt: wiretime.New(w.UpdatedAt)}
}

// Delivery is one event to one receiver, with every attempt: the admin
// delivery log.
type Delivery struct {
	ID      string `json:"id"`
	EventID string `json:"eventId"`
	Event   string `json:"event"`
	// Target is webhook or callback.
	Target     string  `json:"target"`
	EndpointID *string `json:"endpointId"`
	// Status is pending, delivered, failed or skipped.
	Status string `json:"status"`
	// Sends counts the times an administrator sent it again.
	Sends       int               `json:"sends"`
	Attempts    []DeliveryAttempt `json:"attempts"`
	DeliveredAt *wiretime.Time    `json:"deliveredAt"`
	CreatedAt   wiretime.Time     `json:"createdAt"`
	UpdatedAt   wiretime.Time     `json:"updatedAt"`
}

// DeliveryAttempt is one try. StatusCode is 0 when no answer came.
type DeliveryAttempt struct {
	Attempt    int           `json:"attempt"`
	At         wiretime.Time `json:"at"`
	StatusCode int           `json:"statusCode"`
	LatencyMS  int64         `json:"latencyMs"`
	Error      string        `json:"error"`
}

// NewDelivery serializes a delivery with its attempts.
func NewDelivery(d *models.DeliveryLog) Delivery {
	out := Delivery{ID: d.ID, EventID: d.EventID, Event: d.EventKind, Target: d.Target, EndpointID: d.EndpointID,
		Status: d.Status, Sends: d.Sends, Attempts: make([]DeliveryAttempt, len(d.AttemptList)),
		DeliveredAt: wiretime.Ptr(d.DeliveredAt), CreatedAt: wiretime.New(d.CreatedAt), UpdatedAt: wiretime.New(d.UpdatedAt)}
	for i, a := range d.AttemptList {
		out.Attempts[i] = DeliveryAttempt{Attempt: a.Attempt, At: wiretime.New(a.At), StatusCode: a.StatusCode,
			LatencyMS: a.LatencyMS, Error: a.Error}
	}
	return out
}

// RedactURL keeps an address's scheme and host and hides the rest, which
// for chat webhooks holds the token.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "…"
	}
	return u.Scheme + "://" + u.Host + "/…"
}
