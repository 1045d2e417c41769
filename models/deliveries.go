package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
)

// Delivery targets and states.
const (
	TargetWebhook  = "webhook"
	TargetCallback = "callback"
	// TargetSlack is the organisation's Slack app's channel, posted to
	// with chat.postMessage (events.PostedToSlack).
	TargetSlack = "slack"

	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliverySkipped   = "skipped"
)

// DeliveryStatuses lists every delivery state, in the order a delivery log
// offers them as filters.
var DeliveryStatuses = []string{DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliverySkipped}

// Delivery is one event to one receiver: an endpoint, or a request's
// callbackUrl. Its id is the Assent-Delivery header and the workflow id.
type Delivery struct {
	ID             string  `gorm:"primaryKey;size:40"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	EventID        string  `gorm:"size:40;not null;uniqueIndex:idx_deliveries_event_target,priority:1"`
	Target         string  `gorm:"size:20;not null;uniqueIndex:idx_deliveries_event_target,priority:2"`
	EndpointID     *string `gorm:"size:40;uniqueIndex:idx_deliveries_event_target,priority:3;index"`
	Status         string  `gorm:"size:20;not null;index"`
	Attempts       int     `gorm:"not null"`
	LastStatusCode int     `gorm:"not null"`
	LastError      string  `gorm:"type:text;not null"`
	// Sends counts the times an administrator sent it again (resend,
	// recover); each send is its own workflow run.
	Sends int `gorm:"not null;default:0"`
	// StartedAt is set once its workflow is started; the dispatcher starts
	// any pending delivery without one.
	StartedAt   *time.Time `gorm:"index"`
	DeliveredAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Traceparent is its event's, set by webhooks.Outbox for the
	// dispatcher, which starts the delivery in that trace; not stored.
	Traceparent string `gorm:"-"`
}

// DeliveryAttempt is one try: when, the answer and how long it took.
type DeliveryAttempt struct {
	ID         uint   `gorm:"primaryKey"`
	DeliveryID string `gorm:"size:40;not null;index"`
	Attempt    int    `gorm:"not null"`
	// Send is the delivery's Sends when the attempt was made: 0 for the
	// first send, n for the nth time an administrator sent it again.
	Send       int       `gorm:"not null;default:0"`
	At         time.Time `gorm:"not null"`
	StatusCode int       `gorm:"not null"`
	LatencyMS  int64     `gorm:"not null"`
	Error      string    `gorm:"type:text;not null"`
}

// TakeUndispatchedEvents reads up to limit outbox events not yet fanned
// out, oldest first, in ctx's transaction. On PostgreSQL each is locked
// and skipped by other dispatchers' transactions (SKIP LOCKED), so one
// event goes to one dispatcher; SQLite serialises them.
func (s *DeliveryStore) TakeUndispatchedEvents(ctx context.Context, limit int) ([]Event, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	q := st.tx.Where("dispatched_at IS NULL").Order("id").Limit(limit)
	if st.tx.Dialector.Name() == "postgres" {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var evs []Event
	return evs, q.Find(&evs).Error
}

// MarkDispatched records, in ctx's transaction, that an event was fanned
// out.
func (s *DeliveryStore) MarkDispatched(ctx context.Context, eventID string, at time.Time) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return st.tx.Model(&Event{}).Where("id = ?", eventID).Update("dispatched_at", at).Error
}

// InsertDeliveries writes new deliveries in ctx's transaction.
func (s *DeliveryStore) InsertDeliveries(ctx context.Context, ds []Delivery) error {
	return insertIn(ctx, &ds)
}

// EnabledEndpoints lists the organisation's enabled webhook endpoints,
// those switched off after failing included.
func (s *DeliveryStore) EnabledEndpoints(ctx context.Context, orgID string) ([]WebhookEndpoint, error) {
	var eps []WebhookEndpoint
	err := s.conn(ctx).Where("organization_id = ? AND enabled", orgID).Order("id").Find(&eps).Error
	return eps, err
}

// HasCallback reports whether the request an event is about has a
// callbackUrl; a subject that is no request has none.
func (s *DeliveryStore) HasCallback(ctx context.Context, subjectType, id string) (bool, error) {
	cb, err := callbackOf(s.conn(ctx), subjectType, id)
	return err == nil && cb.URL != nil, err
}

// PostsToSlack reports whether the organisation's Slack app posts to a
// channel.
func (s *DeliveryStore) PostsToSlack(ctx context.Context, orgID string) (bool, error) {
	return slackPosts(s.conn(ctx), orgID)
}

// UnstartedDeliveries lists pending deliveries whose workflow has not
// been started: ones sent again by an administrator, and ones created
// before olderThan whose start was lost.
func (s *DeliveryStore) UnstartedDeliveries(ctx context.Context, olderThan time.Time, limit int) ([]Delivery, error) {
	var out []Delivery
	err := s.db.WithContext(ctx).Where("status = ? AND started_at IS NULL AND (sends > 0 OR created_at < ?)", DeliveryPending, olderThan).
		Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// MarkDeliveryStarted records that a delivery's workflow exists.
func (s *DeliveryStore) MarkDeliveryStarted(ctx context.Context, id string) error {
	return s.db.WithContext(ctx).Model(&Delivery{}).Where("id = ? AND started_at IS NULL", id).Update("started_at", Now()).Error
}

// DeliveryWork is what one attempt needs.
type DeliveryWork struct {
	Delivery Delivery
	Event    Event
	// Endpoint is set for webhook deliveries.
	Endpoint *WebhookEndpoint
	// URL and Secrets are where and with what the attempt is sent.
	URL     string
	Secrets []string
	// SlackInteractive is set when the organisation's Slack app takes
	// clicks, so Slack messages may carry decision buttons.
	SlackInteractive bool
	// Slack is the organisation's Slack app, for TargetSlack.
	Slack *SlackIntegration
}

// LoadDeliveryWork reads a delivery with its event and receiver.
func (s *DeliveryStore) LoadDeliveryWork(ctx context.Context, id string, now time.Time) (*DeliveryWork, error) {
	db := s.db.WithContext(ctx)
	w := &DeliveryWork{}
	if err := db.Where("id = ?", id).Take(&w.Delivery).Error; err != nil {
		return nil, notFound(err, "delivery "+id)
	}
	if err := db.Where("id = ?", w.Delivery.EventID).Take(&w.Event).Error; err != nil {
		return nil, err
	}
	switch w.Delivery.Target {
	case TargetSlack:
		// Disconnected since the event: Slack is nil and nothing is posted.
		slack, err := s.slack.slackIntegration(db, w.Delivery.OrganizationID)
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return nil, err
		}
		if err == nil {
			w.Slack, w.SlackInteractive = slack, slack.Interactive()
		}
		return w, nil
	case TargetWebhook:
		w.Endpoint = &WebhookEndpoint{}
		if err := db.Where("id = ?", *w.Delivery.EndpointID).Take(w.Endpoint).Error; err != nil {
			return nil, err
		}
		secrets, err := s.WebhookSecrets(w.Endpoint, now)
		if err != nil {
			return nil, err
		}
		w.URL, w.Secrets = w.Endpoint.URL, secrets
		if w.Endpoint.Format == events.FormatSlack {
			var err error
			if w.SlackInteractive, err = slackInteractive(db, w.Delivery.OrganizationID); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	cb, err := callbackOf(db, w.Event.SubjectType, w.Event.SubjectID)
	if err != nil {
		return nil, err
	}
	if cb.URL == nil || cb.Secret == nil {
		return nil, notFound(gorm.ErrRecordNotFound, "callback of "+w.Event.SubjectID)
	}
	secret, err := s.open(cb.column, *cb.Secret, w.Event.SubjectID)
	if err != nil {
		return nil, err
	}
	w.URL, w.Secrets = *cb.URL, []string{secret}
	return w, nil
}

// callback is where a request's callbacks go and the secret that signs
// them, sealed in column; both nil when it set no callbackUrl.
type callback struct {
	URL    *string      `gorm:"column:callback_url"`
	Secret *string      `gorm:"column:callback_secret"`
	column sealedColumn `gorm:"-"`
}

// callbackOf reads the callback of the request an event is about.
// Only a request's events may go to a callback; each kind's table has the
// columns callback_url and callback_secret.
func callbackOf(db *gorm.DB, subjectType, id string) (*callback, error) {
	k := kindOf(subjectType)
	if k == nil {
		return &callback{}, nil
	}
	cb := callback{column: k.callback()}
	err := db.Table(k.Table).Select("callback_url, callback_secret").Where("id = ?", id).Take(&cb).Error
	return &cb, notFound(err, subjectType+" "+id)
}

// AttemptResult is how an attempt ended.
type AttemptResult struct {
	Attempt    int
	At         time.Time
	StatusCode int
	Latency    time.Duration
	// Err is empty for a delivered attempt.
	Err string
	// Final marks the last attempt the delivery will get.
	Final bool
	// EventAt is when the delivery's event was written, for the time to
	// its first success (metrics); zero leaves that out.
	EventAt time.Time
}

// InsertAttempt logs an attempt of d and moves d on (delivered, failed
// at its last attempt, or still pending), in ctx's transaction; the
// attempt is counted once that commits. switchedOff says the attempt
// switched d's endpoint off.
func (s *DeliveryStore) InsertAttempt(ctx context.Context, d *Delivery, r AttemptResult, switchedOff bool) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	if err := st.tx.Create(&DeliveryAttempt{DeliveryID: d.ID, Attempt: r.Attempt, Send: d.Sends, At: r.At, StatusCode: r.StatusCode,
		LatencyMS: r.Latency.Milliseconds(), Error: r.Err}).Error; err != nil {
		return err
	}
	upd := map[string]any{"attempts": r.Attempt, "last_status_code": r.StatusCode, "last_error": r.Err, "updated_at": r.At}
	switch {
	case r.Err == "":
		upd["status"], upd["delivered_at"] = DeliveryDelivered, r.At
	case r.Final:
		upd["status"] = DeliveryFailed
	}
	if err := st.tx.Model(&Delivery{}).Where("id = ?", d.ID).Updates(upd).Error; err != nil {
		return err
	}
	st.onCommit = append(st.onCommit, func() { s.attempted(d, r, switchedOff) })
	return nil
}

// ResetFailures clears an endpoint's count of consecutive failures after
// a success at at.
func (s *DeliveryStore) ResetFailures(ctx context.Context, endpointID string, at time.Time) error {
	return s.conn(ctx).Model(&WebhookEndpoint{}).Where("id = ?", endpointID).
		Updates(map[string]any{"consecutive_failures": 0, "updated_at": at}).Error
}

// SkipDelivery marks a delivery skipped: its endpoint was switched off or
// disabled after it was queued.
func (s *DeliveryStore) SkipDelivery(ctx context.Context, id string) error {
	return s.db.WithContext(ctx).Model(&Delivery{}).Where("id = ?", id).
		Updates(map[string]any{"status": DeliverySkipped, "updated_at": Now()}).Error
}

// LockDelivery reads one of the organisation's deliveries under its row
// lock, for the rest of ctx's transaction.
func (s *DeliveryStore) LockDelivery(ctx context.Context, orgID, id string) (*Delivery, error) {
	return lockedIn[Delivery](ctx, orgID, id, "delivery "+id)
}

// RequeueDelivery makes delivery id pending again with a new send number;
// the dispatcher starts its workflow.
func (s *DeliveryStore) RequeueDelivery(ctx context.Context, id string) error {
	_, err := requeue(s.conn(ctx).Where("id = ?", id))
	return err
}

// RequeueFailed makes every failed or skipped delivery to the
// organisation's endpoint created at or after since pending again,
// returning how many.
func (s *DeliveryStore) RequeueFailed(ctx context.Context, orgID, endpointID string, since time.Time) (int64, error) {
	return requeue(s.conn(ctx).Where("organization_id = ? AND endpoint_id = ? AND status IN ? AND created_at >= ?",
		orgID, endpointID, []string{DeliveryFailed, DeliverySkipped}, since))
}

// requeue makes the deliveries q selects pending again with a new send
// number, returning how many; the dispatcher starts their workflows.
func requeue(q *gorm.DB) (int64, error) {
	res := q.Model(&Delivery{}).Updates(map[string]any{"status": DeliveryPending, "sends": gorm.Expr("sends + 1"),
		"started_at": nil, "updated_at": Now()})
	return res.RowsAffected, res.Error
}

// DeliveryLog is a delivery with its event kind and every attempt, for
// the admin delivery log.
type DeliveryLog struct {
	Delivery
	EventKind   string
	AttemptList []DeliveryAttempt
}

// DeliveryFilter narrows a delivery log.
type DeliveryFilter struct {
	EndpointID string
	// Status is one of the Delivery* states, or empty for all.
	Status string
}

// ListDeliveryLog pages through an endpoint's deliveries, newest first,
// each with its attempts.
func (s *DeliveryStore) ListDeliveryLog(ctx context.Context, orgID string, f DeliveryFilter, p Page) ([]DeliveryLog, string, error) {
	db := s.db.WithContext(ctx)
	if _, err := take[WebhookEndpoint](db, orgID, f.EndpointID, "webhook endpoint "+f.EndpointID); err != nil {
		return nil, "", err
	}
	q := db.Where("organization_id = ? AND endpoint_id = ?", orgID, f.EndpointID)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	ds, next, err := list(q, p, ids.Delivery, func(d *Delivery) string { return d.ID })
	if err != nil {
		return nil, "", err
	}
	out, err := s.withAttempts(ctx, ds)
	return out, next, err
}

// GetDelivery returns one of the organisation's deliveries with its
// attempts.
func (s *DeliveryStore) GetDelivery(ctx context.Context, orgID, id string) (*DeliveryLog, error) {
	d, err := take[Delivery](s.db.WithContext(ctx), orgID, id, "delivery "+id)
	if err != nil {
		return nil, err
	}
	out, err := s.withAttempts(ctx, []Delivery{*d})
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// withAttempts adds event kinds and attempts to ds in two queries.
func (s *DeliveryStore) withAttempts(ctx context.Context, ds []Delivery) ([]DeliveryLog, error) {
	out := make([]DeliveryLog, len(ds))
	if len(ds) == 0 {
		return out, nil
	}
	ids, eventIDs := make([]string, len(ds)), make([]string, len(ds))
	for i, d := range ds {
		ids[i], eventIDs[i] = d.ID, d.EventID
	}
	db := s.db.WithContext(ctx)
	var evs []Event
	if err := db.Select("id, kind").Where("id IN ?", eventIDs).Find(&evs).Error; err != nil {
		return nil, err
	}
	kinds := make(map[string]string, len(evs))
	for _, e := range evs {
		kinds[e.ID] = e.Kind
	}
	var atts []DeliveryAttempt
	if err := db.Where("delivery_id IN ?", ids).Order("attempt, id").Find(&atts).Error; err != nil {
		return nil, err
	}
	byDelivery := make(map[string][]DeliveryAttempt, len(ds))
	for _, a := range atts {
		byDelivery[a.DeliveryID] = append(byDelivery[a.DeliveryID], a)
	}
	for i, d := range ds {
		out[i] = DeliveryLog{Delivery: d, EventKind: kinds[d.EventID], AttemptList: byDelivery[d.ID]}
	}
	return out, nil
}

// ListDeliveries returns all of an organisation's deliveries, oldest
// first, for tests; the admin delivery log pages with ListDeliveryLog.
func (s *DeliveryStore) ListDeliveries(ctx context.Context, orgID string) ([]Delivery, error) {
	var out []Delivery
	err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Order("id").Find(&out).Error
	return out, err
}

// DeliveryRetention is how long an event and its deliveries (their log,
// resend and recover) are kept once each delivery has ended.
const DeliveryRetention = 30 * 24 * time.Hour

// PurgeDeliveries removes the events dispatched more than DeliveryRetention
// ago whose deliveries have all ended (delivered, failed or skipped), with
// those deliveries and their attempts, a thousand events per transaction.
// A pending delivery keeps its event. It returns the events removed.
func (s *DeliveryStore) PurgeDeliveries(ctx context.Context) (int64, error) {
	var total int64
	for {
		var n int64
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var ids []string
			if err := tx.Model(&Event{}).Where("dispatched_at < ?", Now().Add(-DeliveryRetention)).
				Where("NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = ?)", DeliveryPending).
				Order("id").Limit(1000).Pluck("id", &ids).Error; err != nil || len(ids) == 0 {
				return err
			}
			ended := tx.Model(&Delivery{}).Select("id").Where("event_id IN ?", ids)
			if err := tx.Where("delivery_id IN (?)", ended).Delete(&DeliveryAttempt{}).Error; err != nil {
				return err
			}
			if err := tx.Where("event_id IN ?", ids).Delete(&Delivery{}).Error; err != nil {
				return err
			}
			res := tx.Where("id IN ?", ids).Delete(&Event{})
			n = res.RowsAffected
			return res.Error
		})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}
