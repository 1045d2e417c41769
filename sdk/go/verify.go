package assent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// ErrMissingSignature: the delivery has no Assent-Signature header.
var ErrMissingSignature = errors.New("webhook: no Assent-Signature header")

// WebhookEvent is a verified delivery: the envelope (an endpoint's event or
// a request's callback) and the delivery's headers.
type WebhookEvent struct {
	Event       string          `json:"event"`
	SentAt      time.Time       `json:"sentAt"`
	RequestType string          `json:"requestType,omitempty"` // callbacks
	RequestID   string          `json:"requestId,omitempty"`   // callbacks
	Data        json.RawMessage `json:"data"`
	Test        bool            `json:"test,omitempty"`
	DeliveryID  string          `json:"-"` // Assent-Delivery, the same across retries
	Attempt     int             `json:"-"` // Assent-Attempt
}

// VerifyWebhook checks a delivery's Assent-Signature against the raw body
// as received (constant time, any of several v1 values, t within
// tolerance of now, DefaultTolerance when zero) and returns the parsed
// event. The errors are webhook's sentinels and ErrMissingSignature.
func VerifyWebhook(rawBody []byte, header http.Header, secret string, tolerance time.Duration) (*WebhookEvent, error) {
	return verifyWebhookAt(rawBody, header, secret, tolerance, time.Now())
}

func verifyWebhookAt(rawBody []byte, header http.Header, secret string, tolerance time.Duration, now time.Time) (*WebhookEvent, error) {
	sig := header.Get(webhook.HeaderSignature)
	if sig == "" {
		return nil, ErrMissingSignature
	}
	if err := webhook.Verify(sig, rawBody, secret, now, tolerance); err != nil {
		return nil, err
	}
	var ev WebhookEvent
	if err := json.Unmarshal(rawBody, &ev); err != nil {
		return nil, fmt.Errorf("webhook: the signed body is not an event: %w", err)
	}
	ev.DeliveryID = header.Get(webhook.HeaderDelivery)
	ev.Attempt, _ = strconv.Atoi(header.Get(webhook.HeaderAttempt))
	return &ev, nil
}

// DecisionClaims are a verified decision token's claims.
type DecisionClaims = decisiontoken.Claims

// VerifyDecisionToken checks offline that token proves input was approved:
// EdDSA signature by a key of jwks (the JSON of /.well-known/jwks.json),
// issuer (the instance's base URL), organisation, expiry, the RFC 8785
// hash of input (any JSON value, or json.RawMessage) and, when action is
// not empty, the registered action. The errors are decisiontoken's.
func VerifyDecisionToken(token string, input any, jwks []byte, issuer, organization, action string) (*DecisionClaims, error) {
	return verifyDecisionTokenAt(token, input, jwks, issuer, organization, action, nil, 0)
}

func verifyDecisionTokenAt(token string, input any, jwks []byte, issuer, organization, action string, now func() time.Time, leeway time.Duration) (*DecisionClaims, error) {
	v, err := decisiontoken.NewVerifier(jwks, issuer, organization)
	if err != nil {
		return nil, err
	}
	v.Now, v.Leeway = now, leeway
	raw, err := inputJSON(input)
	if err != nil {
		return nil, err
	}
	if action != "" {
		return v.VerifyAction(token, action, raw)
	}
	return v.Verify(token, raw)
}

func inputJSON(input any) ([]byte, error) {
	switch x := input.(type) {
	case json.RawMessage:
		return x, nil
	case []byte:
		return x, nil
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", decisiontoken.ErrInput, err)
	}
	return raw, nil
}

// keyCache holds the instance's decision keys and the caller's
// organisation, for Client.VerifyDecisionToken.
type keyCache struct {
	mu   sync.Mutex
	jwks []byte
	at   time.Time
	org  string
}

// VerifyDecisionToken verifies token against this instance: its key set
// (kept five minutes, fetched again for an unknown key), the caller's
// organisation (from GET /api/v1/me) and the client's base URL as issuer.
func (c *Client) VerifyDecisionToken(ctx context.Context, token string, input any, action string) (*DecisionClaims, error) {
	org, err := c.organization(ctx)
	if err != nil {
		return nil, err
	}
	jwks, err := c.decisionKeys(ctx, false)
	if err != nil {
		return nil, err
	}
	claims, err := VerifyDecisionToken(token, input, jwks, c.baseURL, org, action)
	if errors.Is(err, decisiontoken.ErrUnknownKey) {
		if jwks, err = c.decisionKeys(ctx, true); err != nil {
			return nil, err
		}
		return VerifyDecisionToken(token, input, jwks, c.baseURL, org, action)
	}
	return claims, err
}

func (c *Client) organization(ctx context.Context) (string, error) {
	c.keys.mu.Lock()
	org := c.keys.org
	c.keys.mu.Unlock()
	if org != "" {
		return org, nil
	}
	me, err := c.Me.Get(ctx)
	if err != nil {
		return "", err
	}
	c.keys.mu.Lock()
	c.keys.org = me.Organization.ID
	c.keys.mu.Unlock()
	return me.Organization.ID, nil
}

func (c *Client) decisionKeys(ctx context.Context, refresh bool) ([]byte, error) {
	c.keys.mu.Lock()
	if !refresh && c.keys.jwks != nil && time.Since(c.keys.at) < 5*time.Minute {
		defer c.keys.mu.Unlock()
		return c.keys.jwks, nil
	}
	c.keys.mu.Unlock()
	var raw []byte
	if err := c.call(ctx, "getDecisionKeys", nil, nil, nil, &raw, nil); err != nil {
		return nil, err
	}
	c.keys.mu.Lock()
	c.keys.jwks, c.keys.at = raw, time.Now()
	c.keys.mu.Unlock()
	return raw, nil
}
