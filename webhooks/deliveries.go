package webhooks

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// Deliveries pages through an endpoint's deliveries, newest first, each
// with its attempts; f.Status narrows them to one state, and an unknown
// one is refused, naming the field.
func (s *Service) Deliveries(ctx context.Context, orgID string, f models.DeliveryFilter, p models.Page) ([]models.DeliveryLog, string, error) {
	if f.Status != "" && !slices.Contains(models.DeliveryStatuses, f.Status) {
		return nil, "", apperr.Field(apperr.InvalidRequest, "status", "status must be one of: %s", strings.Join(models.DeliveryStatuses, ", "))
	}
	return s.store.ListDeliveryLog(ctx, orgID, f, p)
}

// Delivery is one of the organisation's deliveries with its attempts.
func (s *Service) Delivery(ctx context.Context, orgID, id string) (*models.DeliveryLog, error) {
	return s.store.GetDelivery(ctx, orgID, id)
}

// Resend sends a settled delivery again under its own id, with a fresh
// schedule of attempts the dispatcher starts. One still being attempted,
// or whose endpoint was deleted, disabled or switched off, is refused.
func (s *Service) Resend(ctx context.Context, orgID, id string) (*models.DeliveryLog, error) {
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		d, err := s.store.LockDelivery(ctx, orgID, id)
		if err != nil {
			return err
		}
		if d.Status == models.DeliveryPending {
			return apperr.New(apperr.InvalidState, "delivery %s is still being attempted", id)
		}
		if d.EndpointID != nil {
			ep, err := s.store.GetWebhookEndpoint(ctx, orgID, *d.EndpointID)
			if apperr.Is(err, apperr.NotFound) {
				return apperr.New(apperr.InvalidState, "the endpoint of delivery %s was deleted", id)
			}
			if err != nil {
				return err
			}
			if err := receiving(ep); err != nil {
				return err
			}
		}
		return s.store.RequeueDelivery(ctx, id)
	})
	if err != nil {
		return nil, err
	}
	return s.store.GetDelivery(ctx, orgID, id)
}

// Recover queues again every failed or skipped delivery to an endpoint
// since a time, such as the start of an outage, returning how many. A
// since in the future, or an endpoint that would only skip them, is
// refused.
func (s *Service) Recover(ctx context.Context, orgID, endpointID string, since time.Time) (int64, error) {
	if since.After(models.Now()) {
		return 0, apperr.Field(apperr.InvalidRequest, "since", "since must not be in the future")
	}
	var n int64
	err := s.store.Tx(ctx, func(ctx context.Context) error {
		ep, err := s.store.GetWebhookEndpoint(ctx, orgID, endpointID)
		if err != nil {
			return err
		}
		if err := receiving(ep); err != nil {
			return err
		}
		n, err = s.store.RequeueFailed(ctx, orgID, endpointID, since)
		return err
	})
	return n, err
}

// receiving refuses to queue deliveries to an endpoint that would only
// skip them.
func receiving(ep *models.WebhookEndpoint) error {
	switch {
	case !ep.Enabled:
		return apperr.New(apperr.InvalidState, "webhook endpoint %s is disabled; enable it first", ep.ID)
	case ep.SwitchedOffAt != nil:
		return apperr.New(apperr.InvalidState, "webhook endpoint %s was switched off after %d failures; enable it first", ep.ID, models.SwitchOffAfter)
	}
	return nil
}
