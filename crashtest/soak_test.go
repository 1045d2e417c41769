package crashtest

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/internal/procstatus"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// soakMetricsToken lets the soak read the serve processes' /metrics on
// their API listener (ASSENT_METRICS_TOKEN).
const soakMetricsToken = "soak-metrics"

// TestClusterSoak runs the crash test's mixed load at a steady pace
// against the production shape for ASSENT_SOAK (a duration: 1h for the
// soak docs/reliability.md records; skipped when unset), with agents
// long-polling beside it, and samples every process about sixty times:
// resident memory and open files of each, goroutines of Assent's, the
// database's connections and sizes, and the latency of reads. After a
// fifth of the run (warm-up; at least as long as a request waits),
// every process must stay flat and reads as fast at the end as at the
// start (holdFlat); then the crash test's
// check holds the hour's load to what each client was told.
// ASSENT_SOAK_REPORT and ASSENT_SOAK_PLOT, when set, are where the
// samples (JSON) and their plot (SVG) are written.
func TestClusterSoak(t *testing.T) {
	spec := os.Getenv("ASSENT_SOAK")
	if spec == "" {
		t.Skip(`the soak runs when ASSENT_SOAK says how long (docs/reliability.md, "The soak")`)
	}
	length, err := time.ParseDuration(spec)
	require.NoError(t, err, "ASSENT_SOAK")
	seed := crashSeed(t)
	clients := envInt("ASSENT_SOAK_CLIENTS", 4)
	t.Logf("soak: %s, %d clients, seed %d", length, clients, seed)

	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Options{Dir: filepath.Join(clusterDir(t), "cluster"), TLS: true, Progress: logWriter{t},
		AssentEnv: append(slices.Clone(receiversOnLoopback), "ASSENT_METRICS_TOKEN="+soakMetricsToken), Assent: assentbin.For(t)})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	svc := &clusterTarget{c: c, boot: bootstrapCluster(t, c)}
	db, err := sql.Open("pgx", strings.Replace(svc.databaseURL(), "/assent?", "/postgres?", 1))
	require.NoError(t, err)
	defer db.Close()

	rcv := newReceiver(t, 10, 6*time.Minute)
	// First attempts fail until a retry (a minute later on the production
	// schedule) still lands within the load, so the check does not wait
	// for the schedule once the load stops.
	rcv.failUntil.Store(time.Now().Add(length - 75*time.Second).UnixNano())
	// Requests wait at most four minutes (a quarter of a shorter run), so
	// after warm-up, which lasts at least that, as many end as begin: the
	// open ones (and the workers' cached workflows) level.
	patience := min(4*time.Minute, (length / 4).Truncate(time.Second))
	warmUp := max(length/5, patience)
	l, stopLoad := startLoad(t, svc, rcv, seed, clients, patience)
	stopPolls := l.longPoll(4, seed)
	s := &soak{c: c, db: db, l: l, start: time.Now()}
	every := max(length/60, 5*time.Second)
	for end := s.start.Add(length); time.Now().Before(end); time.Sleep(every) {
		require.NoError(t, s.sample(ctx))
	}
	require.NoError(t, s.sample(ctx))
	stopPolls()
	stopLoad()

	out, _ := json.MarshalIndent(s.samples, "", "  ")
	if path := os.Getenv("ASSENT_SOAK_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
	}
	if path := os.Getenv("ASSENT_SOAK_PLOT"); path != "" {
		require.NoError(t, os.WriteFile(path, plotSoak(s.samples), 0o644))
	}
	s.holdFlat(t, warmUp)
	r := l.finish(t, rcv, seed, nil, func(r *report) { r.ExitedOnTheirOwn = c.Exits() })
	assertNothingLost(t, r)
	assert.Empty(t, r.ExitedOnTheirOwn, "no process exits on its own in a soak")
}

// soakSample is the cluster at one moment of the soak.
type soakSample struct {
	Minutes float64 `json:"minutes"`
	// Ops are the operations the load had been answered so far; LongPolls
	// the long-polls that returned.
	Ops       int   `json:"ops"`
	LongPolls int64 `json:"longPolls"`
	// RSSMB and OpenFiles are every process's; Goroutines Assent's.
	RSSMB      map[string]float64 `json:"rssMB"`
	OpenFiles  map[string]int     `json:"openFiles"`
	Goroutines map[string]int     `json:"goroutines"`
	// Connections are PostgreSQL's, DatabaseMB each database's size.
	Connections int                `json:"connections"`
	DatabaseMB  map[string]float64 `json:"databaseMB"`
	// Reads through the proxy, in ms: 40 GETs of a recent approval and
	// 10 first pages of the approvals list.
	GetP50  float64 `json:"getP50"`
	GetP95  float64 `json:"getP95"`
	ListP50 float64 `json:"listP50"`
	ListMax float64 `json:"listMax"`
}

type soak struct {
	c       *cluster.Cluster
	db      *sql.DB
	l       *load
	start   time.Time
	samples []soakSample
}

// assentProcesses are the processes whose goroutines the soak reads.
var assentProcesses = []string{cluster.Serve1, cluster.Serve2, cluster.Worker1, cluster.Worker2}

func (s *soak) sample(ctx context.Context) error {
	x := soakSample{Minutes: time.Since(s.start).Minutes(), RSSMB: map[string]float64{}, OpenFiles: map[string]int{},
		Goroutines: map[string]int{}, DatabaseMB: map[string]float64{}}
	s.l.mu.Lock()
	for _, o := range s.l.ops {
		if o.status != 0 {
			x.Ops++
		}
	}
	s.l.mu.Unlock()
	x.LongPolls = s.l.longPolls.Load()
	for _, name := range cluster.Names() {
		pid := s.c.PID(name)
		if pid == 0 {
			return fmt.Errorf("%s is not running", name)
		}
		kb, _ := procstatus.KB(strconv.Itoa(pid), "VmRSS")
		x.RSSMB[name] = float64(kb) / 1024
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			return err
		}
		x.OpenFiles[name] = len(fds)
	}
	a := s.c.Addresses()
	public, err := url.Parse(a.Assent)
	if err != nil {
		return err
	}
	for i, base := range append(slices.Clone(a.Serve), a.Workers...) {
		n, err := goroutines(ctx, base+"/metrics", public.Host)
		if err != nil {
			return err
		}
		x.Goroutines[assentProcesses[i]] = n
	}
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").Scan(&x.Connections); err != nil {
		return err
	}
	for _, name := range []string{"assent", "temporal", "temporal_visibility"} {
		var bytes int64
		if err := s.db.QueryRowContext(ctx, "SELECT pg_database_size($1)", name).Scan(&bytes); err != nil {
			return err
		}
		x.DatabaseMB[name] = float64(bytes) / (1 << 20)
	}
	rng := rand.New(rand.NewPCG(uint64(len(s.samples)), 7))
	var gets, lists []time.Duration
	for i := range 50 {
		path := "/api/v1/approvals?limit=50"
		if i < 40 {
			a := s.l.pick(rng)
			if a == nil {
				continue
			}
			path = "/api/v1/approvals/" + a.id
		}
		began := time.Now()
		var read json.RawMessage
		if err := s.l.get(path, &read); err != nil {
			return err
		}
		if i < 40 {
			gets = append(gets, time.Since(began))
		} else {
			lists = append(lists, time.Since(began))
		}
	}
	x.GetP50, x.GetP95 = quantileMS(gets, 0.5), quantileMS(gets, 0.95)
	x.ListP50, x.ListMax = quantileMS(lists, 0.5), quantileMS(lists, 1)
	s.samples = append(s.samples, x)
	return nil
}

// goroutines reads go_goroutines from an Assent process's /metrics, asked
// under the app's public host (a serve answers only its own host there).
func goroutines(ctx context.Context, url, host string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+soakMetricsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("GET %s: no go_goroutines", url)
}

// quantileMS is the q-quantile of ds in milliseconds, 0 for none.
func quantileMS(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := min(int(q*float64(len(ds))), len(ds)-1)
	return float64(ds[i].Microseconds()) / 1000
}

// holdFlat compares the first third of the samples after warm-up with
// the last third: every process (Assent's, Temporal's, PostgreSQL, the
// proxy) keeps its memory within 30 % (and 20 MB) and its open files
// within 30 % (and 20), each of Assent's its goroutines too, and the
// reads' median latencies stay within 50 % (and 2 ms).
func (s *soak) holdFlat(t *testing.T, warmUp time.Duration) {
	var after []soakSample
	for _, x := range s.samples {
		if x.Minutes >= warmUp.Minutes() {
			after = append(after, x)
		}
	}
	require.GreaterOrEqual(t, len(after), 6, "too few samples after warm-up to tell flat from growing")
	third := len(after) / 3
	early, late := after[:third], after[len(after)-third:]
	median := func(xs []soakSample, f func(soakSample) float64) float64 {
		var vs []float64
		for _, x := range xs {
			vs = append(vs, f(x))
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	flat := func(what string, f func(soakSample) float64, ratio, slack float64) {
		before, now := median(early, f), median(late, f)
		t.Logf("soak: %s %.1f after warm-up, %.1f at the end", what, before, now)
		assert.LessOrEqual(t, now, before*ratio+slack, "%s grew from %.1f to %.1f", what, before, now)
	}
	for _, name := range cluster.Names() {
		flat(name+" resident MB", func(x soakSample) float64 { return x.RSSMB[name] }, 1.3, 20)
		flat(name+" open files", func(x soakSample) float64 { return float64(x.OpenFiles[name]) }, 1.3, 20)
	}
	for _, name := range assentProcesses {
		flat(name+" goroutines", func(x soakSample) float64 { return float64(x.Goroutines[name]) }, 1.3, 20)
	}
	flat("GET p50 ms", func(x soakSample) float64 { return x.GetP50 }, 1.5, 2)
	flat("list p50 ms", func(x soakSample) float64 { return x.ListP50 }, 1.5, 2)
	flat("PostgreSQL connections", func(x soakSample) float64 { return float64(x.Connections) }, 1.3, 20)
}

// longPoll runs clients that long-poll recent approvals (wait=20s), as
// agents waiting on a decision do, until stop.
func (l *load) longPoll(clients int, seed uint64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(2000+i)))
			for ctx.Err() == nil {
				a := l.pick(rng)
				if a == nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.svc.url("/api/v1/approvals/"+a.id+"?wait=20s"), nil)
				if err != nil {
					return
				}
				req.Header.Set("Authorization", "Bearer "+l.svc.keys().AgentKey)
				if resp, err := l.client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					l.longPolls.Add(1)
				}
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}
