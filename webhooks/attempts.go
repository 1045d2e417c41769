package webhooks

import (
	"context"

	"github.com/assent-hq/assent/models"
)

// Attempts record what each attempt of a delivery came to; the delivery
// activity records through them.
type Attempts struct {
	Store *models.DeliveryStore
}

// Record logs an attempt of d, moves d on and keeps its endpoint's count
// of consecutive failures, switching the endpoint off at
// models.SwitchOffAfter; a success resets the count.
func (a Attempts) Record(ctx context.Context, d *models.Delivery, r models.AttemptResult) error {
	return a.Store.Tx(ctx, func(ctx context.Context) error {
		switchedOff := false
		switch {
		case d.EndpointID == nil: // a callback or Slack: no endpoint to keep
		case r.Err == "":
			if err := a.Store.ResetFailures(ctx, *d.EndpointID, r.At); err != nil {
				return err
			}
		default:
			ep, err := a.Store.LockWebhookEndpoint(ctx, d.OrganizationID, *d.EndpointID)
			if err != nil {
				return err
			}
			ep.ConsecutiveFailures++
			ep.LastError = r.Err
			if ep.ConsecutiveFailures >= models.SwitchOffAfter && ep.SwitchedOffAt == nil {
				ep.SwitchedOffAt, switchedOff = &r.At, true
			}
			if err := a.Store.SaveWebhookEndpoint(ctx, ep); err != nil {
				return err
			}
		}
		return a.Store.InsertAttempt(ctx, d, r, switchedOff)
	})
}
