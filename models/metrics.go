package models

import (
	"context"

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

// Readings reads what the database gauges show, for the whole instance:
// the open requests of each kind and those overdue, and the outbox's lag,
// from the queries the System page reads for one organisation.
func (s *Store) Readings(ctx context.Context) (metrics.Readings, error) {
	r := metrics.Readings{Open: map[string]int{}, Overdue: map[string]int{}}
	counts, err := s.OpenRequests(ctx, AllOrganizations)
	if err != nil {
		return r, err
	}
	for _, c := range counts {
		r.Open[c.Kind], r.Overdue[c.Kind] = int(c.Open), int(c.Overdue)
	}
	r.OutboxLag, err = s.OutboxLag(ctx)
	return r, err
}

// counted counts a request created when its workflow writes its first
// transition (so a record taken back after a failed start never counts),
// and settled by the transition that settles it: before was open, after is
// not. The decision time runs from its creation to the write.
func (r Requests[T, P]) counted(before, after *T) {
	if r.s.metrics == nil {
		return
	}
	if *P(before).RequestHead().seq == 0 {
		r.s.metrics.RequestCreated(r.k.Subject)
	}
	was, h := *P(before).RequestHead().status, P(after).RequestHead()
	if was != r.k.Open || *h.status == r.k.Open {
		return
	}
	risk, _ := riskOf(after)
	decided := *h.status != states.Expired && *h.status != states.Cancelled
	r.s.metrics.RequestSettled(r.k.Subject, *h.status, risk, h.updatedAt.Sub(*h.createdAt), decided)
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
