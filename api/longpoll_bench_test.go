package api_test

// A benchmark of many long-polls held at once on the stack `assent dev`
// runs, and on APIs beside it that share its database and Temporal but
// not its process (as `assent serve` beside `assent worker`). Results:
// docs/benchmarks.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/procstatus"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// longPollWaiters is how many long-polls the benchmark holds: the
// process's default cap (ASSENT_LONG_POLLS).
const longPollWaiters = config.DefaultLongPolls

// BenchmarkLongPollWaiters holds 1,000 long-polls (GET …?wait=60s) on as
// many approvals, each agent key holding its cap of 20, measures what
// holding them costs the process, then decides every approval (16
// deciders at once) and times each waiter's answer from its decision's
// response. Three ways a waiter hears of its decision:
//   - dev: API and worker in one process; the worker's write wakes it.
//   - serve: the API is not the worker's process, and the decision is made
//     through it; its Update's return wakes it.
//   - serve-decided-elsewhere: the decision is made through another API
//     process (a replica; or the worker expiring it): on PostgreSQL the
//     worker's relayed change (NOTIFY) tells, on SQLite only the
//     watcher's poll of the database.
func BenchmarkLongPollWaiters(b *testing.B) {
	for _, kind := range testenv.Databases {
		b.Run(kind, func(b *testing.B) {
			s := newBenchStack(b, kind)
			keys := waiterKeys(b, s, longPollWaiters/config.DefaultLongPollsPerKey)
			elsewhere := func() *benchStack {
				api := *s
				api.longPolls = ratelimit.NewSlots(config.DefaultLongPollsPerKey, config.DefaultLongPolls)
				store := models.NewStore(s.store.DB(), testenv.Keys())
				api.url = serveBench(b, store, s.tc, netguard.Public, api.longPolls)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { store.Listen(ctx, quiet); close(done) }() // as serve does
				b.Cleanup(func() { cancel(); <-done })
				return &api
			}
			serve, replica := elsewhere(), elsewhere()
			for _, c := range []struct {
				name           string
				waitOn, decide *benchStack
			}{{"dev", s, s}, {"serve", serve, serve}, {"serve-decided-elsewhere", serve, replica}} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						holdAndWake(b, c.waitOn, c.decide, keys)
					}
				})
			}
		})
	}
}

// waiterKeys creates n agent keys of s's organisation.
func waiterKeys(b *testing.B, s *benchStack, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		_, key, err := s.store.CreateKey(context.Background(), s.org, fmt.Sprintf("waiter %d", i), models.KeyAgent, scopes.All)
		require.NoError(b, err)
		keys[i] = key
	}
	return keys
}

// holdAndWake is one round of BenchmarkLongPollWaiters.
func holdAndWake(b *testing.B, waitOn, decide *benchStack, keys []string) {
	b.StopTimer()
	phase := progress(b)
	ids := make([]string, longPollWaiters)
	inParallel(b, len(ids), 16, func(i int) error {
		out, err := decide.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated)
		for try := 0; err != nil && strings.Contains(err.Error(), "try again") && try < 3; try++ {
			out, err = decide.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated) // a start timed out on a loaded machine
		}
		if err == nil {
			var a struct{ ID string }
			err = json.Unmarshal(out, &a)
			ids[i] = a.ID
		}
		return err
	})
	phase("created")
	waitOn.settle(b, &approvals.Approval{})
	phase("settled")
	before := memNow()

	// Each waiter on its own connection, as separate agents would be.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: len(ids)}}
	defer hc.CloseIdleConnections()
	waiter := *waitOn
	waiter.http = hc
	answered := make([]time.Time, len(ids))
	errs := make([]error, len(ids))
	var repolls atomic.Int64
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			for {
				out, err := waiter.callAs(keys[i/config.DefaultLongPollsPerKey], "GET", "/api/v1/approvals/"+id+"?wait=60s", "", http.StatusOK)
				var a struct{ Status string }
				if err == nil {
					err = json.Unmarshal(out, &a)
				}
				if err != nil || a.Status != "pending" {
					answered[i], errs[i] = time.Now(), err
					return
				}
				repolls.Add(1) // the minute ran out before its decision
			}
		})
	}
	catchUp(b, func() bool { return waitOn.longPolls.InUse() == len(ids) })
	time.Sleep(200 * time.Millisecond) // each has read its approval and waits
	held := memNow()
	phase("held")

	b.StartTimer()
	decided := make([]time.Time, len(ids))
	start := time.Now()
	inParallel(b, len(ids), 16, func(i int) error {
		_, err := decide.callAs(decide.bobToken, "POST", "/api/v1/approvals/"+ids[i]+"/decision", `{"decision":"approve"}`, http.StatusOK)
		decided[i] = time.Now()
		return err
	})
	deciding := time.Since(start)
	phase("decided")
	wg.Wait()
	b.StopTimer()
	phase("answered")
	for _, err := range errs {
		require.NoError(b, err)
	}

	lat := make([]time.Duration, len(ids))
	early := 0
	for i := range ids {
		if lat[i] = answered[i].Sub(decided[i]); lat[i] < 0 {
			early++
		}
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	per := func(after, before float64) float64 { return (after - before) / float64(len(ids)) }
	b.ReportMetric(ms(lat[len(lat)*50/100]), "wake-p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "wake-p99-ms")
	b.ReportMetric(ms(lat[len(lat)-1]), "wake-max-ms")
	b.ReportMetric(float64(early)/float64(len(ids)), "answered-first")
	b.ReportMetric(float64(len(ids))/deciding.Seconds(), "decisions/s")
	b.ReportMetric(per(held.heap, before.heap)/1024, "heap-KB/waiter")
	b.ReportMetric(per(held.rss, before.rss)/1024, "rss-KB/waiter")
	b.ReportMetric(per(held.goroutines, before.goroutines), "goroutines/waiter")
	b.ReportMetric(per(held.serving, before.serving), "server-goroutines/waiter")
	b.ReportMetric(float64(repolls.Load()), "repolls")
}

// progress returns a function that prints each phase's time to stderr (a
// benchmark's log is cut at its first lines), to see where a slow run
// spends it.
func progress(b *testing.B) func(string) {
	last := time.Now()
	return func(what string) {
		fmt.Fprintf(os.Stderr, "%s: %s in %s\n", b.Name(), what, time.Since(last).Round(time.Millisecond))
		last = time.Now()
	}
}

// inParallel runs fn(0) … fn(n-1) on clients goroutines.
func inParallel(b *testing.B, n, clients int, fn func(i int) error) {
	b.Helper()
	var next atomic.Int64
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n) && errs[c] == nil; i = next.Add(1) - 1 {
				errs[c] = fn(int(i))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(b, err)
	}
}

// mem is what the process holds: heap in use and resident memory in
// bytes, goroutines, and of those the HTTP server's (a connection's and
// its background read).
type mem struct{ heap, rss, goroutines, serving float64 }

func memNow() mem {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var stacks bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 2)
	serving := 0
	for g := range strings.SplitSeq(stacks.String(), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http.(*connReader).backgroundRead") {
			serving++
		}
	}
	return mem{heap: float64(ms.HeapInuse), rss: float64(rssKB() * 1024), goroutines: float64(runtime.NumGoroutine()), serving: float64(serving)}
}

// rssKB is the process's resident memory, 0 where /proc cannot tell.
func rssKB() int64 {
	kb, _ := procstatus.KB(procstatus.Self, "VmRSS")
	return kb
}
