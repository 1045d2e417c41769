package metrics

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Readings are what the database says of the whole instance, whichever
// process wrote it.
type Readings struct {
	// Open counts the requests still open, by kind; Overdue those of them
	// more than a grace past their expiry, which their workflow should
	// have expired.
	Open, Overdue map[string]int
	// OutboxLag is the age of the oldest outbox event not yet dispatched;
	// zero when none waits.
	OutboxLag time.Duration
}

// readTimeout bounds one reading: a scrape must not hang on the database.
const readTimeout = 5 * time.Second

// databaseCollector reads the database when scraped, at most once per
// interval: scrapes in between see the last reading, so neither many
// scrapers nor a short scrape interval load the database.
type databaseCollector struct {
	open, overdue, lag *prometheus.Desc
	failed             prometheus.Counter

	mu    sync.Mutex
	read  func(context.Context) (Readings, error)
	every time.Duration
	at    time.Time // of the last reading, successful or not
	last  *Readings // nil until one succeeds, and after one fails
}

func newDatabaseCollector() *databaseCollector {
	return &databaseCollector{
		open: prometheus.NewDesc("assent_requests_open",
			"Requests still open, by kind, read from the database (the whole instance, at most every interval).", []string{"kind"}, nil),
		overdue: prometheus.NewDesc("assent_requests_overdue",
			"Open requests more than a minute past their expiry, which their workflow should have expired, by kind.", []string{"kind"}, nil),
		lag: prometheus.NewDesc("assent_outbox_lag_seconds",
			"Age of the oldest outbox event not yet dispatched to deliveries; 0 when none waits.", nil, nil),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "assent_database_readings_failed_total",
			Help: "Readings of the database for the gauges that failed; the gauges are left out until one succeeds."}),
	}
}

// ReadDatabase has the database gauges read by read, at most once every
// every. Without it they are not exposed.
func (m *Metrics) ReadDatabase(every time.Duration, read func(context.Context) (Readings, error)) {
	if m == nil {
		return
	}
	c := m.database
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read, c.every, c.at, c.last = read, every, time.Time{}, nil
}

func (c *databaseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.overdue
	ch <- c.lag
	c.failed.Describe(ch)
}

func (c *databaseCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reading()
	c.failed.Collect(ch)
	if r == nil {
		return
	}
	for _, g := range []struct {
		desc   *prometheus.Desc
		byKind map[string]int
	}{{c.open, r.Open}, {c.overdue, r.Overdue}} {
		kinds := make([]string, 0, len(g.byKind))
		for k := range g.byKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(g.byKind[k]), k)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, r.OutboxLag.Seconds())
}

// reading is the last reading, taken again when older than the interval.
func (c *databaseCollector) reading() *Readings {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read == nil {
		return nil
	}
	if !c.at.IsZero() && time.Since(c.at) < c.every {
		return c.last
	}
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	r, err := c.read(ctx)
	c.at = time.Now()
	if err != nil {
		c.failed.Inc()
		c.last = nil
		return nil
	}
	c.last = &r
	return c.last
}
