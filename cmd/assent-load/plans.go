package main

import (
	"context"
	"fmt"
	"time"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/webhooks"
)

// plans asks PostgreSQL how it runs the queries the backlog weighs on:
// the background ones (outbox dispatcher, reconciler, the open-request
// metrics) and every list the measures read. The store's own methods run
// in a transaction that is rolled back, so their SQL is the service's,
// byte for byte, and nothing changes.
func (l *load) plans(ctx context.Context) (map[string]string, error) {
	db := l.db
	ring, err := secretkey.Parse(l.c.SecretKey())
	if err != nil {
		return nil, err
	}
	var hotID string
	if err := db.Raw("SELECT id FROM members WHERE organization_id = ? AND email = ?", l.st.Org, l.st.HotEmail).Scan(&hotID).Error; err != nil {
		return nil, err
	}
	for _, table := range []string{"approvals", "collections", "request_people", "events", "deliveries"} {
		if err := db.Exec("VACUUM ANALYZE " + table).Error; err != nil {
			return nil, err
		}
	}

	plans := map[string]string{}
	tx := db.WithContext(ctx).Begin()
	defer tx.Rollback()
	if err := models.ExplainQueries(tx, func(name, sql, plan string, err error) {
		if err != nil {
			plan = "EXPLAIN failed: " + err.Error()
		}
		plans[name] += sql + "\n" + plan + "\n\n"
	}); err != nil {
		return nil, err
	}
	s := models.NewStore(tx, ring)
	page := models.Page{Limit: 50}
	calls := []struct {
		name string
		run  func(context.Context) error
	}{
		{"dispatcher: undispatched events", func(c context.Context) error {
			_, err := webhooks.Outbox{Store: s.DeliveryStore}.Dispatch(c, 50)
			return err
		}},
		{"reconciler: approvals whose workflow never ran", func(c context.Context) error {
			_, err := approvals.Records(s).Unowned(c, models.Now().Add(-time.Minute), 50)
			return err
		}},
		{"reconciler: collections whose workflow never ran", func(c context.Context) error {
			_, err := collections.Records(s).Unowned(c, models.Now().Add(-time.Minute), 50)
			return err
		}},
		{"metrics: open and overdue requests", func(c context.Context) error { _, err := s.Readings(c); return err }},
		{"inbox: the hot person's approvals, a page", func(c context.Context) error {
			_, _, err := approvals.Records(s).List(c, l.st.Org, "", approvals.Filter{RequestFilter: models.RequestFilter{Status: "pending"}, WaitingOn: hotID}, page)
			return err
		}},
		{"inbox: the hot person's collections", func(c context.Context) error {
			_, err := collections.Records(s).Waiting(c, l.st.Org, hotID, models.Attention, 50)
			return err
		}},
		{"inbox of every kind: the hot person's newest waiting approval ids", func(c context.Context) error {
			_, err := approvals.Records(s).WaitingKeys(c, l.st.Org, hotID, models.Newest, 50)
			return err
		}},
		{"inbox: the hot person's newest collections (the inbox of every kind)", func(c context.Context) error {
			_, err := collections.Records(s).Waiting(c, l.st.Org, hotID, models.Newest, 50)
			return err
		}},
		{"inbox page: the hot person's approvals needing attention first, and counts", func(c context.Context) error {
			if _, err := approvals.Records(s).Waiting(c, l.st.Org, hotID, models.Attention, 50); err != nil {
				return err
			}
			_, err := approvals.Records(s).Counts(c, l.st.Org, hotID, models.Now().Add(24*time.Hour))
			return err
		}},
		{"list: pending approvals", func(c context.Context) error {
			_, _, err := approvals.Records(s).List(c, l.st.Org, "", models.RequestFilter{Status: "pending"}, page)
			return err
		}},
		{"list: collections", func(c context.Context) error {
			_, _, err := collections.Records(s).List(c, l.st.Org, "", models.RequestFilter{}, page)
			return err
		}},
		{"admin list: a webhook's deliveries", func(c context.Context) error {
			_, _, err := s.ListDeliveryLog(c, l.st.Org, models.DeliveryFilter{EndpointID: l.st.Webhook}, page)
			return err
		}},
	}
	for _, call := range calls {
		if err := call.run(models.ExplainAs(ctx, call.name)); err != nil {
			return nil, fmt.Errorf("%s: %w", call.name, err)
		}
	}
	return plans, nil
}

// drain waits until the workers have caught up with the fill: every
// request's workflow has run its first step, every event is fanned out
// and no delivery waits. Creates answer once Temporal has the workflow;
// the rest of a create's work queues behind them.
func (l *load) drain(ctx context.Context) error {
	db := l.db
	start := time.Now()
	for {
		var left struct{ Unowned, Events, Deliveries int64 }
		err := db.WithContext(ctx).Raw(`SELECT
			(SELECT count(*) FROM approvals WHERE seq = 0 AND status = ?) + (SELECT count(*) FROM collections WHERE seq = 0 AND status = ?) AS unowned,
			(SELECT count(*) FROM events WHERE dispatched_at IS NULL) AS events,
			(SELECT count(*) FROM deliveries WHERE status = ?) AS deliveries`, states.Pending, states.Open, models.DeliveryPending).Scan(&left).Error
		if err != nil {
			return err
		}
		if left.Unowned+left.Events+left.Deliveries == 0 {
			l.logf("drained in %.0f s", time.Since(start).Seconds())
			return nil
		}
		l.logf("draining: %d requests whose workflow has not run, %d events not fanned out, %d deliveries waiting", left.Unowned, left.Events, left.Deliveries)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
		}
	}
}

// progress counts the work the workers have done so far, what drain
// waits for from the other side: requests whose workflow has run,
// events fanned out and deliveries ended. Its rise a second is their
// throughput.
func (l *load) progress(ctx context.Context) (int64, error) {
	var n int64
	err := l.db.WithContext(ctx).Raw(`SELECT
		(SELECT count(*) FROM approvals WHERE seq > 0) + (SELECT count(*) FROM collections WHERE seq > 0) +
		(SELECT count(*) FROM events WHERE dispatched_at IS NOT NULL) + (SELECT count(*) FROM deliveries WHERE status <> ?)`,
		models.DeliveryPending).Scan(&n).Error
	return n, err
}
