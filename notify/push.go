package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/assent-hq/assent/models"
)

// Push sends Web Push notifications (RFC 8030) to the browsers people
// subscribed on their inbox: each encrypted to its subscription's keys
// (RFC 8291, aes128gcm) and signed with the instance's VAPID key (RFC
// 8292). They go beside the email that asks a person, in the same
// activity, so they share its retries and its "each once".
type Push struct {
	// HTTP reaches the push services: outbound.NewClient with the
	// process's policy, as deliveries do.
	HTTP *http.Client
	// Subject is the VAPID contact the push services may write to: an
	// https:// URL, or an email address (without mailto:).
	Subject string
}

// PushMessage is a push's whole payload. Nothing of a request goes into
// it but its title, its kind, its risk (approvals) and its page: a push
// passes through the browser vendor's service and shows on a locked
// screen, so no description, input or restricted field.
type PushMessage struct {
	Title string `json:"title"`
	Kind  string `json:"kind"`
	Risk  string `json:"risk,omitempty"`
	URL   string `json:"url"`
}

// pushTitleLimit keeps the payload within one record (4 KB) whatever the
// title; a notification shows far less.
const pushTitleLimit = 300

// pushTTL bounds how long a push service keeps a push for a browser that
// is offline; never past the request's expiry.
const pushTTL = 7 * 24 * time.Hour

// push sends msg to each of personID's browsers not pushed to yet under
// notice (the email's notice id). A push service's 404 or 410 removes the
// subscription; any other refusal is logged and not retried; no answer,
// 429 or 5xx fails the attempt, for the activity's retry.
func (n *Notifier) push(ctx context.Context, orgID, notice, personID string, msg PushMessage, expires time.Time) error {
	if n.Push == nil {
		return nil
	}
	subs, err := n.Store.PushSubscriptions(ctx, orgID, personID)
	if err != nil || len(subs) == 0 {
		return err
	}
	msg.Title = Shorten(oneLine(msg.Title), pushTitleLimit)
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	public, private, err := n.Store.VAPIDKey(ctx)
	if err != nil {
		return err
	}
	ttl := min(time.Until(expires), pushTTL)
	urgency := webpush.UrgencyNormal
	if msg.Risk == models.RiskHigh || msg.Risk == models.RiskCritical {
		urgency = webpush.UrgencyHigh
	}
	opts := &webpush.Options{HTTPClient: n.Push.HTTP, Subscriber: n.Push.Subject, VAPIDPublicKey: public,
		VAPIDPrivateKey: private, TTL: max(int(ttl.Seconds()), 0), Urgency: urgency}
	var errs []error
	for i := range subs {
		sub := &subs[i]
		id := notice + "/push/" + sub.ID
		sent, err := n.sent(ctx, id)
		if err != nil || sent {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, n.pushOne(ctx, orgID, id, sub, body, opts))
	}
	return errors.Join(errs...)
}

// pushOne sends one push and records it as sent.
func (n *Notifier) pushOne(ctx context.Context, orgID, id string, sub *models.PushSubscription, body []byte, opts *webpush.Options) error {
	resp, err := webpush.SendNotificationWithContext(ctx, body, &webpush.Subscription{Endpoint: sub.Endpoint,
		Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}}, opts)
	if err != nil {
		// The endpoint is a credential: keep it out of the error.
		return fmt.Errorf("push %s: %w", id, withoutURL(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch status := resp.StatusCode; {
	case status >= 200 && status < 300:
		return n.Store.RecordNotice(ctx, orgID, id)
	case status == http.StatusNotFound || status == http.StatusGone:
		n.logger().InfoContext(ctx, "push subscription gone: removed", "subscription", sub.ID, "status", status)
		return n.Store.RemovePushSubscription(ctx, sub)
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return fmt.Errorf("push %s: the push service answered %d", id, status)
	default:
		n.logger().WarnContext(ctx, "push refused: not retried", "notice", id, "status", status)
		return nil
	}
}

// withoutURL drops the URL an http.Client error names.
func withoutURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return errors.New("the push service did not answer in time")
	}
	return err
}
