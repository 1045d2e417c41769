package webhooks

import (
	"context"
	"time"

	"github.com/assent-hq/assent/models"
)

// Deliveries pages through an endpoint's deliveries, newest first, each
// with its attempts; f.Status narrows them to one state, and an unknown
// one is refused, naming the field.
func (s *Service) Deliveries(ctx context.Context, orgID string, f models.DeliveryFilter, p models.Page) ([]models.DeliveryLog, string, error) {
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
	return s.store.ResendDelivery(ctx, orgID, id)
}

// Recover queues again every failed or skipped delivery to an endpoint
// since a time, such as the start of an outage, returning how many. A
// since in the future, or an endpoint that would only skip them, is
// refused.
func (s *Service) Recover(ctx context.Context, orgID, endpointID string, since time.Time) (int64, error) {
	return s.store.RecoverDeliveries(ctx, orgID, endpointID, since)
}
