package webhooks

import (
	"context"
	"time"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/models"
)

// Outbox decides who receives each event the outbox holds; the worker's
// dispatcher starts the deliveries it makes.
type Outbox struct {
	Store *models.DeliveryStore
}

// Dispatch turns up to limit undispatched events into deliveries, in the
// transaction that marks them dispatched, so an event is fanned out
// exactly once. It returns the deliveries to start.
func (o Outbox) Dispatch(ctx context.Context, limit int) ([]models.Delivery, error) {
	var pending []models.Delivery
	err := o.Store.Tx(ctx, func(ctx context.Context) error {
		pending = nil
		evs, err := o.Store.TakeUndispatchedEvents(ctx, limit)
		if err != nil {
			return err
		}
		now := models.Now()
		for i := range evs {
			ev := &evs[i]
			ds, err := o.receivers(ctx, ev, now)
			if err != nil {
				return err
			}
			if len(ds) > 0 {
				if err := o.Store.InsertDeliveries(ctx, ds); err != nil {
					return err
				}
			}
			for _, d := range ds {
				if d.Status == models.DeliveryPending {
					d.Traceparent = ev.Traceparent
					pending = append(pending, d)
				}
			}
			if err := o.Store.MarkDispatched(ctx, ev.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	return pending, err
}

// receivers are ev's deliveries: one per subscribed endpoint (kept as
// skipped while the endpoint is switched off, so recover can send it
// later), the request's callback when the event is one callbacks receive,
// and the Slack app's channel for events.PostedToSlack when the
// organisation posts there.
func (o Outbox) receivers(ctx context.Context, ev *models.Event, now time.Time) ([]models.Delivery, error) {
	delivery := func(target string, endpoint *string) models.Delivery {
		id := ""
		if endpoint != nil {
			id = *endpoint
		}
		return models.Delivery{ID: deliveryID(ev, target, id), OrganizationID: ev.OrganizationID, EventID: ev.ID, Target: target,
			EndpointID: endpoint, Status: models.DeliveryPending, CreatedAt: now, UpdatedAt: now}
	}
	eps, err := o.Store.EnabledEndpoints(ctx, ev.OrganizationID)
	if err != nil {
		return nil, err
	}
	var out []models.Delivery
	for _, ep := range eps {
		if !events.Subscribed(ep.Events, ev.Kind) {
			continue
		}
		d := delivery(models.TargetWebhook, &ep.ID)
		if ep.SwitchedOffAt != nil {
			d.Status = models.DeliverySkipped
		}
		out = append(out, d)
	}
	if events.IsCallbackEvent(ev.SubjectType, ev.Kind) {
		has, err := o.Store.HasCallback(ctx, ev.SubjectType, ev.SubjectID)
		if err != nil {
			return nil, err
		}
		if has {
			out = append(out, delivery(models.TargetCallback, nil))
		}
	}
	if events.PostedToSlack(ev.Kind) {
		posts, err := o.Store.PostsToSlack(ctx, ev.OrganizationID)
		if err != nil {
			return nil, err
		}
		if posts {
			out = append(out, delivery(models.TargetSlack, nil))
		}
	}
	return out, nil
}

// deliveryID is the id of ev's delivery to a target (and endpoint), the
// same whenever it is made: a receiver de-duplicates on it
// (Assent-Delivery), so an event dispatched again after a restore from a
// backup taken before its dispatch reaches a receiver under the id it
// already had.
func deliveryID(ev *models.Event, target, endpointID string) string {
	return ids.Derived(ids.Delivery, ev.ID, target, endpointID)
}
