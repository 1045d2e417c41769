package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/internal/states"
)

// SetMetrics has the store count what it commits into m: requests created
// and settled, delivery attempts, endpoints switched off, report versions
// and gate checks, each once, after its transaction commits and never for
// a retry that wrote nothing. Call it before the store is used.
func (s *Store) SetMetrics(m *metrics.Metrics) { s.metrics = m }

// Metrics is what the store counts into, for the services that count
// beside it (the publish scan's time); nil counts nothing.
func (s *core) Metrics() *metrics.Metrics { return s.metrics }

// OverdueGrace is how far past its expiry an open request may be before
// the readings call it overdue: its workflow's timer should have expired
// it by then.
const OverdueGrace = time.Minute

// Readings reads what the database gauges show: the open requests of each
// kind and those overdue, and the outbox's lag.
func (s *Store) Readings(ctx context.Context) (metrics.Readings, error) {
	db := s.db.WithContext(ctx)
	now := Now()
	r := metrics.Readings{Open: map[string]int{}, Overdue: map[string]int{}}
	for _, count := range []func(*gorm.DB, time.Time, *metrics.Readings) error{
		countOpen(approvalKind), countOpen(collectionKind), countOpen(reviewKind),
	} {
		if err := count(db, now.Add(-OverdueGrace), &r); err != nil {
			return r, err
		}
	}
	var oldest []Event
	if err := db.Select("id, created_at").Where("dispatched_at IS NULL").Order("id").Limit(1).Find(&oldest).Error; err != nil {
		return r, err
	}
	if len(oldest) > 0 {
		r.OutboxLag = max(now.Sub(oldest[0].CreatedAt), 0)
	}
	return r, nil
}

// countOpen counts one kind's open requests, and those of them that
// expired before overdue, in one query.
func countOpen[T any](k *requestKind[T]) func(*gorm.DB, time.Time, *metrics.Readings) error {
	return func(db *gorm.DB, overdue time.Time, r *metrics.Readings) error {
		var open, late int64
		err := db.Model(new(T)).Select("COUNT(*), COALESCE(SUM(CASE WHEN expires_at < ? THEN 1 ELSE 0 END), 0)", overdue).
			Where("status = ?", k.open).Row().Scan(&open, &late)
		r.Open[k.subject], r.Overdue[k.subject] = int(open), int(late)
		return err
	}
}

// settled counts a transition that settled a request: before was open,
// after is not. The decision time runs from its creation to the write.
func (r Requests[T, P]) settled(before, after *T) {
	was, h := *P(before).head().status, P(after).head()
	if r.s.metrics == nil || was != r.k.open || *h.status == r.k.open {
		return
	}
	risk := ""
	if r.k.risk != nil {
		risk = r.k.risk(after)
	}
	decided := *h.status != states.Expired && *h.status != states.Cancelled
	r.s.metrics.RequestSettled(r.k.subject, *h.status, risk, h.updatedAt.Sub(*h.createdAt), decided)
}

// attempted counts a delivery attempt recorded; switchedOff says it
// switched its endpoint off.
func (s *DeliveryStore) attempted(d *Delivery, r AttemptResult, switchedOff bool) {
	m := s.metrics
	switch {
	case r.Err == "":
		m.DeliveryAttempt(metrics.Delivered, r.Attempt)
		if d.DeliveredAt == nil && !r.EventAt.IsZero() {
			m.FirstDelivered(d.Target, r.At.Sub(r.EventAt))
		}
	case r.Final:
		m.DeliveryAttempt(metrics.Failed, r.Attempt)
	default:
		m.DeliveryAttempt(metrics.Retrying, r.Attempt)
	}
	if switchedOff {
		m.EndpointSwitchedOff()
	}
}

// versionOutcomes name a new version's state as the metrics do.
var versionOutcomes = map[string]string{VersionPublished: "live", VersionHeld: "held", VersionDeclined: "declined"}

// versionWritten counts a report version written.
func (s *ReportStore) versionWritten(v *ReportVersion) {
	if v != nil {
		s.metrics.ReportVersion(versionOutcomes[v.State])
	}
}
