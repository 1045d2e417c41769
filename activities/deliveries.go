package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/slackapi"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/webhooks"
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
	if w.Delivery.Target == models.TargetSlack && (w.Slack == nil || !w.Slack.Posts()) {
		return a.Store.SkipDelivery(ctx, deliveryID) // the Slack app was disconnected since
	}
	var o outbound.Outcome
	if w.Delivery.Target == models.TargetSlack {
		o = a.postToSlack(ctx, w, now)
	} else {
		body, err := deliveryBody(w, now)
		if err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrDeliveryRejected, nil)
		}
		headers := events.DeliveryHeaders(w.Event.Kind, deliveryID, attempt, now, body, w.Secrets...)
		o = outbound.Post(ctx, a.HTTP, w.URL, body, headers)
	}
	result := models.AttemptResult{Attempt: attempt, At: now, StatusCode: o.StatusCode, Latency: o.Latency,
		Final: o.Err != nil && (!o.Retryable || try >= workflows.DeliveryAttempts), EventAt: w.Event.CreatedAt}
	if o.Err != nil {
		result.Err = o.Err.Error()
	}
	if err := (webhooks.Attempts{Store: a.Store.DeliveryStore}).Record(ctx, &w.Delivery, result); err != nil {
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
	return events.EncodeWebhookFor(w.Endpoint.Format, b, events.SlackOptions{Interactive: w.SlackInteractive, Org: w.Delivery.OrganizationID})
}

// postToSlack posts the event to the organisation's Slack channel with
// chat.postMessage, as its Slack app's bot: the message a slack-format
// endpoint gets, with Approve and Reject when the app takes clicks.
func (a *Activities) postToSlack(ctx context.Context, w *models.DeliveryWork, now time.Time) outbound.Outcome {
	b, err := events.NewWebhookBody(w.Event.Kind, json.RawMessage(w.Event.Data), now)
	if err != nil {
		return outbound.Outcome{Err: err}
	}
	text, blocks := events.SlackMessage(b, events.SlackOptions{Interactive: w.SlackInteractive, Org: w.Delivery.OrganizationID})
	start := time.Now()
	_, _, err = slackapi.New(w.Slack.BotToken, a.HTTP, a.SlackAPIURL).PostMessageContext(ctx, w.Slack.Channel,
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	o := outbound.Outcome{StatusCode: http.StatusOK, Latency: time.Since(start)}
	var status slack.StatusCodeError
	var limited *slack.RateLimitedError
	var refused slack.SlackErrorResponse
	switch {
	case err == nil:
	case errors.As(err, &limited):
		//lint:ignore ST1005 Slack is a name
		o.StatusCode, o.Err, o.Retryable = http.StatusTooManyRequests, errors.New("Slack answered 429 (rate limited)"), true
	case errors.As(err, &status):
		//lint:ignore ST1005 Slack is a name
		o.StatusCode, o.Err = status.Code, fmt.Errorf("Slack answered %d", status.Code)
		o.Retryable = status.Code >= 500 || status.Code == http.StatusRequestTimeout
	case errors.As(err, &refused):
		// Slack's own refusal (channel_not_found, not_in_channel,
		// invalid_auth…): another attempt would get it too.
		//lint:ignore ST1005 Slack is a name
		o.StatusCode, o.Err = 0, fmt.Errorf("Slack refused the message: %s", refused.Err)
	default:
		o.StatusCode, o.Err, o.Retryable = 0, fmt.Errorf("could not reach Slack: %v", withoutURL(err)), true
	}
	return o
}

// withoutURL keeps the Web API's address (and any token in a query) out
// of a transport error.
func withoutURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}
