package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/internal/procstatus"
)

// measures are one run's figures, with and without the backlog.
type measures struct {
	At       time.Time          `json:"at"`
	Requests int                `json:"requests"`
	Reads    map[string]latency `json:"reads"`
	// RSS is each Assent process's resident memory now and at its peak,
	// in MB.
	RSS       map[string]memory `json:"rss"`
	Webhooks  int64             `json:"webhooks"`
	Callbacks int64             `json:"callbacks"`
	Plans     map[string]string `json:"plans,omitempty"`
	Restart   *restart          `json:"restart,omitempty"`
}

type latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type memory struct {
	NowMB  float64 `json:"nowMB"`
	PeakMB float64 `json:"peakMB"`
}

// read is one kind of read: the path of its i-th sample and who reads.
type read struct {
	name string
	key  func(l *load) string
	path func(l *load, rnd *rand.Rand) string
}

func agent(l *load) string  { return l.st.AgentKey }
func adminK(l *load) string { return l.st.AdminKey }
func hot(l *load) string    { return l.st.HotToken }

func fixed(p string) func(*load, *rand.Rand) string {
	return func(*load, *rand.Rand) string { return p }
}

// reads are what the measures time: one request of each kind, the hot
// person's inbox, and the lists agents and administrators page through.
var reads = []read{
	{"GET one approval", agent, func(l *load, rnd *rand.Rand) string {
		return "/api/v1/approvals/" + l.st.Approvals[rnd.IntN(len(l.st.Approvals))]
	}},
	{"GET one collection", agent, func(l *load, rnd *rand.Rand) string {
		return "/api/v1/collections/" + l.st.Collections[rnd.IntN(len(l.st.Collections))]
	}},
	{"inbox, every kind (50)", hot, fixed("/api/v1/inbox?limit=50")},
	{"inbox, approvals, first page (50)", hot, fixed("/api/v1/inbox?kind=approval&limit=50")},
	{"inbox, collections (50)", hot, fixed("/api/v1/inbox?kind=collection&limit=50")},
	{"approvals list, pending (50)", agent, fixed("/api/v1/approvals?status=pending&limit=50")},
	{"collections list (50)", agent, fixed("/api/v1/collections?limit=50")},
	{"admin: members (50)", adminK, fixed("/api/v1/admin/members?limit=50")},
	{"admin: webhook deliveries (50)", adminK, func(l *load, _ *rand.Rand) string {
		return "/api/v1/admin/webhooks/" + l.st.Webhook + "/deliveries?limit=50"
	}},
}

// deepPages is how far into the hot person's approvals inbox the paging
// measure goes, page by page.
const deepPages = 20

// oneClient marks the reads timed one at a time: on a small machine, 16
// clients queue behind the CPU, and one client shows what the backlog
// itself costs a read.
const oneClient = ", 1 client"

// oneClientSamples is how many reads each one-client measure takes: a
// fifth of a measure's at o.clients, so reading one at a time takes
// minutes, not a quarter of an hour.
func (o options) oneClientSamples() int { return o.samples / 5 }

// measure times every read, clients at a time and then one at a time,
// and reads the processes' memory.
func (l *load) measure(ctx context.Context, label string) (*measures, error) {
	m := &measures{At: time.Now().UTC(), Requests: l.st.Filled, Reads: map[string]latency{}, RSS: map[string]memory{}}
	l.logf("measuring (%s, %d requests)", label, l.st.Filled)
	for _, run := range []struct {
		clients, samples int
		suffix           string
	}{{l.o.clients, l.o.samples, ""}, {1, l.o.oneClientSamples(), oneClient}} {
		for _, r := range reads {
			lat, err := l.time(ctx, r, run.clients, run.samples)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			m.Reads[r.name+run.suffix] = lat
			l.logf("  %-48s p50 %6.1f ms  p99 %6.1f ms", r.name+run.suffix, lat.P50, lat.P99)
		}
		lat, err := l.page(ctx, run.clients)
		if err != nil {
			return nil, err
		}
		m.Reads[fmt.Sprintf("inbox, approvals, pages 1-%d", deepPages)+run.suffix] = lat
	}
	for _, name := range []string{cluster.Serve1, cluster.Serve2, cluster.Worker1, cluster.Worker2} {
		mem, err := rss(l.c.PID(name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m.RSS[name] = mem
	}
	m.Webhooks, m.Callbacks = l.rcv.webhooks.Load(), l.rcv.callbacks.Load()
	return m, nil
}

// time runs samples reads of r, clients at a time.
func (l *load) time(ctx context.Context, r read, clients, samples int) (latency, error) {
	per := samples / clients
	return l.timeClients(ctx, clients, func(w int, get getter) {
		rnd := rand.New(rand.NewPCG(uint64(w), 7))
		for range per {
			if get(r.path(l, rnd), r.key(l), nil) != nil {
				return
			}
		}
	})
}

// page walks the hot person's approvals inbox deepPages pages deep, one
// client per walk, clients walks at once: each page's time.
func (l *load) page(ctx context.Context, clients int) (latency, error) {
	return l.timeClients(ctx, clients, func(_ int, get getter) {
		for range 5 {
			cursor := ""
			for range deepPages {
				var page struct {
					NextCursor *string `json:"nextCursor"`
				}
				path := "/api/v1/inbox?kind=approval&limit=50"
				if cursor != "" {
					path += "&cursor=" + cursor
				}
				if get(path, l.st.HotToken, &page) != nil || page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
		}
	})
}

// getter GETs path with key, decoding the answer into into, and records
// how long it took.
type getter func(path, key string, into any) error

// timeClients runs client clients times at once, each with a getter that
// times its reads, and sums up every read's time and the first error.
func (l *load) timeClients(ctx context.Context, clients int, client func(w int, get getter)) (latency, error) {
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	get := func(path, key string, into any) error {
		start := time.Now()
		err := l.call(ctx, "GET", path, key, "", nil, 200, into)
		d := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		all = append(all, d)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return err
	}
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() { client(w, get) })
	}
	wg.Wait()
	return summarise(all), firstErr
}

func summarise(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return latency{N: len(ds), P50: ms(ds[len(ds)/2]), P99: ms(ds[(len(ds)*99)/100]), Max: ms(ds[len(ds)-1])}
}

// rss reads a process's resident memory, now and at its peak.
func rss(pid int) (memory, error) {
	now, ok := procstatus.KB(strconv.Itoa(pid), "VmRSS")
	peak, okPeak := procstatus.KB(strconv.Itoa(pid), "VmHWM")
	if pid == 0 || !ok || !okPeak {
		return memory{}, fmt.Errorf("no memory readings for process %d (not running?)", pid)
	}
	return memory{NowMB: float64(now) / 1024, PeakMB: float64(peak) / 1024}, nil
}
