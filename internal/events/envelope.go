package events

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// Header names, as package webhook defines them for receivers.
const (
	HeaderEvent     = webhook.HeaderEvent
	HeaderDelivery  = webhook.HeaderDelivery
	HeaderSignature = webhook.HeaderSignature
	HeaderAttempt   = webhook.HeaderAttempt
)

// WebhookBody is the envelope POSTed to an organisation webhook.
type WebhookBody struct {
	Event  string          `json:"event"`
	SentAt wiretime.Time   `json:"sentAt"`
	Data   json.RawMessage `json:"data"`
	// Test is set only on a delivery made by the Send test control.
	Test bool `json:"test,omitempty"`
}

// Webhook endpoint formats: the signed JSON envelope, a Slack incoming
// webhook or a Microsoft Teams workflow.
const (
	FormatJSON  = "json"
	FormatSlack = "slack"
	FormatTeams = "teams"
)

// EncodeWebhook writes b in an endpoint's format: the bytes that are
// signed and sent. A Slack message carries no decision buttons; see
// EncodeWebhookFor.
func EncodeWebhook(format string, b WebhookBody) ([]byte, error) {
	return EncodeWebhookFor(format, b, SlackOptions{})
}

// EncodeWebhookFor is EncodeWebhook for an organisation whose Slack
// messages o describes.
func EncodeWebhookFor(format string, b WebhookBody, o SlackOptions) ([]byte, error) {
	switch format {
	case FormatJSON:
		return json.Marshal(b)
	case FormatSlack:
		return encodeSlack(b, o)
	case FormatTeams:
		return encodeTeams(b)
	}
	return nil, fmt.Errorf("events: unknown webhook format %q", format)
}

// CallbackBody is the envelope POSTed to a request's callbackUrl (spec
// 6.3). Data is the same object the organisation webhook carries.
type CallbackBody struct {
	Event       string          `json:"event"`
	SentAt      wiretime.Time   `json:"sentAt"`
	RequestType string          `json:"requestType"`
	RequestID   string          `json:"requestId"`
	Data        json.RawMessage `json:"data"`
}

// NewWebhookBody builds a webhook envelope for a known kind.
func NewWebhookBody(kind string, data any, sentAt time.Time) (WebhookBody, error) {
	if !Valid(kind) {
		return WebhookBody{}, fmt.Errorf("events: unknown event kind %q", kind)
	}
	raw, err := rawData(data)
	if err != nil {
		return WebhookBody{}, err
	}
	return WebhookBody{Event: kind, SentAt: wiretime.New(sentAt), Data: raw}, nil
}

// NewCallbackBody builds a callback envelope, refusing a kind that table
// 6.3 does not send to a request of requestType.
func NewCallbackBody(requestType, requestID, kind string, data any, sentAt time.Time) (CallbackBody, error) {
	if !IsCallbackEvent(requestType, kind) {
		return CallbackBody{}, fmt.Errorf("events: %q is not a callback event for request type %q", kind, requestType)
	}
	raw, err := rawData(data)
	if err != nil {
		return CallbackBody{}, err
	}
	return CallbackBody{Event: kind, SentAt: wiretime.New(sentAt), RequestType: requestType, RequestID: requestID, Data: raw}, nil
}

// MarshalJSON writes an absent data as {}.
func (b WebhookBody) MarshalJSON() ([]byte, error) {
	type plain WebhookBody // drops the method, so no recursion
	p := plain(b)
	p.Data = orEmpty(p.Data)
	return json.Marshal(p)
}

// MarshalJSON writes an absent data as {}.
func (b CallbackBody) MarshalJSON() ([]byte, error) {
	type plain CallbackBody
	p := plain(b)
	p.Data = orEmpty(p.Data)
	return json.Marshal(p)
}

// DeliveryHeaders returns the headers of one attempt, signed over body at
// t. Call it when the attempt is sent, so that t is fresh on every retry.
func DeliveryHeaders(kind, deliveryID string, attempt int, t time.Time, body []byte, secrets ...string) http.Header {
	h := make(http.Header, 4)
	h.Set(HeaderEvent, kind)
	h.Set(HeaderDelivery, deliveryID)
	h.Set(HeaderAttempt, strconv.Itoa(attempt))
	h.Set(HeaderSignature, webhook.SignatureHeader(t, body, secrets...))
	return h
}

func orEmpty(d json.RawMessage) json.RawMessage {
	if len(d) == 0 {
		return json.RawMessage(`{}`) // the spec says data is an object, never null
	}
	return d
}

// rawData encodes data once, so the envelope embeds exactly those bytes.
// Nil (or JSON null) becomes {}; anything other than an object is refused,
// because the spec promises receivers an object.
func rawData(data any) (json.RawMessage, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("events: encode data: %w", err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("events: data must be a JSON object, got %.20s", b)
	}
	return b, nil
}
