package activities

import (
	"context"
	"encoding/json"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// Deliver makes one attempt of a delivery. The body is built and signed
// now, so a retry carries a fresh t and the endpoint's current secrets.
// The attempt is recorded whatever its outcome; a rejected attempt is a
// non-retryable error of type workflows.ErrDeliveryRejected.
//
// firstAttempt numbers the send's first attempt; the attempt sent is
// numbered from it by Temporal's count, which includes an attempt whose
// outcome a crash kept from being recorded. Zero (a workflow started
// before firstAttempt existed) numbers from the attempts recorded.
func (a *Activities) Deliver(ctx context.Context, deliveryID string, firstAttempt int) error {
	try := int(activity.GetInfo(ctx).Attempt) // within this send, for the retry policy
	now := models.Now()
	w, err := a.Store.LoadDeliveryWork(ctx, deliveryID, now)
	if err != nil {
		return err
	}
	attempt := w.Delivery.Attempts + 1 // numbered across sends, for the log and Assent-Attempt
	if firstAttempt > 0 {
		attempt = max(attempt, firstAttempt+try-1)
	}
	if w.Delivery.Status != models.DeliveryPending {
		return nil // settled by an earlier attempt whose completion was lost
	}
	if ep := w.Endpoint; ep != nil && (!ep.Enabled || ep.SwitchedOffAt != nil) {
		// Kept as skipped, so recover can send it once the endpoint is on.
		return a.Store.SkipDelivery(ctx, deliveryID)
	}
	body, err := deliveryBody(w, now)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrDeliveryRejected, nil)
	}
	headers := events.DeliveryHeaders(w.Event.Kind, deliveryID, attempt, now, body, w.Secrets...)
	o := outbound.Post(ctx, a.HTTP, w.URL, body, headers)
	result := models.AttemptResult{Attempt: attempt, At: now, StatusCode: o.StatusCode, Latency: o.Latency,
		Final: o.Err != nil && (!o.Retryable || try >= workflows.DeliveryAttempts)}
	if o.Err != nil {
		result.Err = o.Err.Error()
	}
	if err := a.Store.RecordAttempt(ctx, &w.Delivery, result); err != nil {
		return err
	}
	switch {
	case o.Err == nil:
		return nil
	case !o.Retryable:
		return temporal.NewNonRetryableApplicationError(o.Err.Error(), workflows.ErrDeliveryRejected, nil)
	}
	return o.Err
}

// deliveryBody is the envelope for the delivery's receiver.
func deliveryBody(w *models.DeliveryWork, sentAt time.Time) ([]byte, error) {
	data := json.RawMessage(w.Event.Data)
	if w.Delivery.Target == models.TargetCallback {
		b, err := events.NewCallbackBody(w.Event.SubjectType, w.Event.SubjectID, w.Event.Kind, data, sentAt)
		if err != nil {
			return nil, err
		}
		return json.Marshal(b)
	}
	b, err := events.NewWebhookBody(w.Event.Kind, data, sentAt)
	if err != nil {
		return nil, err
	}
	return events.EncodeWebhook(w.Endpoint.Format, b)
}
