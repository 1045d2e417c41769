// Package webhooks manages an organisation's webhook endpoints: list and
// read them, add one, change it, switch it on or off, rotate its signing
// secret, send it a test and delete it; and the delivery log
// (deliveries.go): an endpoint's deliveries, one delivery, resending it
// and recovering an endpoint's failed ones. A delivery may also be a
// request's callback or the Slack app's channel; it lives here because
// the administrator who manages endpoints reads and resends it. This is
// the one code path behind the admin API and the admin pages, so both
// refuse the same addresses, events and resends with the same messages.
package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/models"
)

// RotationOverlap is how long an old signing secret keeps signing after a
// rotation, so receivers can switch without missing a delivery.
const RotationOverlap = 24 * time.Hour

// Settings is what an administrator sets on an endpoint; a nil field is
// left as it is (on create: the default). Its tags are the limits for the
// REST body and the page's form alike.
type Settings struct {
	URL     *string   `json:"url" validate:"omitempty,max=2048"`
	Format  *string   `json:"format" validate:"omitempty,oneof=json slack teams"`
	Events  *[]string `json:"events" validate:"omitempty,max=100"`
	Enabled *bool     `json:"enabled"`
}

// TestResult is what a Send test got back from the receiver.
type TestResult struct {
	StatusCode int    `json:"statusCode"`
	LatencyMS  int64  `json:"latencyMs"`
	Delivered  bool   `json:"delivered"`
	Error      string `json:"error,omitempty"`
}

// Service manages endpoints in the store; receiver addresses are checked
// against one policy when saved and dialled under it when tested.
type Service struct {
	store   *models.DeliveryStore
	policy  *netguard.Policy
	client  *http.Client
	baseURL string
}

// New returns the service; a nil policy is netguard.Public. baseURL goes
// into the test event, so a receiver can tell which Assent sent it.
func New(store *models.DeliveryStore, policy *netguard.Policy, baseURL string) *Service {
	if policy == nil {
		policy = netguard.Public
	}
	return &Service{store: store, policy: policy, client: outbound.NewClient(policy), baseURL: baseURL}
}

// check refuses an address the policy forbids and an unknown event kind.
func (s *Service) check(ctx context.Context, in Settings) error {
	if in.URL != nil {
		if err := s.policy.CheckURL(ctx, *in.URL); err != nil {
			return apperr.Field(apperr.InvalidRequest, "url", "url is refused: %v", err)
		}
	}
	if in.Events != nil {
		for i, k := range *in.Events {
			if !events.IsWebhookEvent(k) {
				return apperr.Field(apperr.InvalidRequest, fmt.Sprintf("events[%d]", i), "unknown event %q; known events: %s",
					k, strings.Join(events.WebhookKinds(), ", "))
			}
		}
	}
	return nil
}

// Create adds an enabled JSON endpoint unless in says otherwise. The
// returned endpoint's Secret is the signing secret, to be shown once.
func (s *Service) Create(ctx context.Context, orgID string, in Settings) (*models.WebhookEndpoint, error) {
	if in.URL == nil || *in.URL == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "url", "url is required")
	}
	if err := s.check(ctx, in); err != nil {
		return nil, err
	}
	n := models.NewWebhookEndpoint{URL: *in.URL, Format: models.FormatJSON, Enabled: true, Secret: events.NewSecret(events.WebhookSecretPrefix)}
	if in.Format != nil {
		n.Format = *in.Format
	}
	if in.Events != nil {
		n.Events = *in.Events
	}
	if in.Enabled != nil {
		n.Enabled = *in.Enabled
	}
	return s.store.CreateWebhookEndpoint(ctx, orgID, n)
}

// Endpoints pages through the organisation's endpoints.
func (s *Service) Endpoints(ctx context.Context, orgID string, p models.Page) ([]models.WebhookEndpoint, string, error) {
	return s.store.ListWebhookEndpoints(ctx, orgID, p)
}

// Endpoint is one of the organisation's endpoints.
func (s *Service) Endpoint(ctx context.Context, orgID, id string) (*models.WebhookEndpoint, error) {
	return s.store.GetWebhookEndpoint(ctx, orgID, id)
}

// Update changes what in sets. Enabling an endpoint that was switched off
// after failures resets its failure count.
func (s *Service) Update(ctx context.Context, orgID, id string, in Settings) (*models.WebhookEndpoint, error) {
	if err := s.check(ctx, in); err != nil {
		return nil, err
	}
	var ep *models.WebhookEndpoint
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		var err error
		if ep, err = s.store.LockWebhookEndpoint(ctx, orgID, id); err != nil {
			return err
		}
		if in.URL != nil {
			ep.URL = *in.URL
		}
		if in.Format != nil {
			ep.Format = *in.Format
		}
		if in.Events != nil {
			ep.Events = append(models.StringList{}, (*in.Events)...)
		}
		if in.Enabled != nil {
			ep.Enabled = *in.Enabled
			if ep.Enabled {
				ep.SwitchedOffAt, ep.ConsecutiveFailures = nil, 0
			}
		}
		return s.store.SaveWebhookEndpoint(ctx, ep)
	})
	return ep, err
}

// SetEnabled switches an endpoint on or off, as Update with only Enabled
// set: switching on one switched off after failures resets its failure
// count.
func (s *Service) SetEnabled(ctx context.Context, orgID, id string, enabled bool) (*models.WebhookEndpoint, error) {
	return s.Update(ctx, orgID, id, Settings{Enabled: &enabled})
}

// Delete removes an endpoint; its delivery log stays.
func (s *Service) Delete(ctx context.Context, orgID, id string) error {
	return s.store.DeleteWebhookEndpoint(ctx, orgID, id)
}

// RotateSecret gives the endpoint a new signing secret (the returned
// endpoint's Secret, to be shown once); the old one keeps signing beside
// it for RotationOverlap.
func (s *Service) RotateSecret(ctx context.Context, orgID, id string) (*models.WebhookEndpoint, error) {
	return s.store.RotateWebhookSecret(ctx, orgID, id, events.NewSecret(events.WebhookSecretPrefix), models.Now().Add(RotationOverlap))
}

// SendTest posts a webhook.test event at once, signed like any delivery,
// whatever events the endpoint takes. It is not
// retried, not logged as a delivery and never counts toward switch-off;
// the receiver's body is not kept. A receiver that fails is a result, not
// an error.
func (s *Service) SendTest(ctx context.Context, orgID, id string) (TestResult, error) {
	ep, err := s.store.GetWebhookEndpoint(ctx, orgID, id)
	if err != nil {
		return TestResult{}, err
	}
	kind := events.WebhookTest
	now := models.Now()
	body, err := events.NewWebhookBody(kind, map[string]any{"message": "A test delivery from Assent.", "url": s.baseURL}, now)
	if err != nil {
		return TestResult{}, err
	}
	body.Test = true
	raw, err := events.EncodeWebhook(ep.Format, body)
	if err != nil {
		return TestResult{}, apperr.New(apperr.InvalidState, "%v", err)
	}
	secrets, err := s.store.WebhookSecrets(ep, now)
	if err != nil {
		return TestResult{}, err
	}
	headers := events.DeliveryHeaders(kind, "test_"+ep.ID, 1, now, raw, secrets...)
	o := outbound.Post(ctx, s.client, ep.URL, raw, headers)
	out := TestResult{StatusCode: o.StatusCode, LatencyMS: o.Latency.Milliseconds(), Delivered: o.Err == nil}
	if o.Err != nil {
		out.Error = o.Err.Error()
	}
	return out, nil
}
