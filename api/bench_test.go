package api_test

// Benchmarks of approvals on the stack `assent dev` runs: the embedded
// Temporal server on a SQLite file, the worker and the API over real HTTP,
// all in this process. Results and how to run them: docs/benchmarks.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/devtemporal"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/ratelimit"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/worker"
)

// benchClients are the numbers of concurrent clients each case runs with.
var benchClients = []int{1, 16}

const benchBody = `{"title":"Pay invoice","approvers":["bob@example.com"]}`

var quiet = slog.New(slog.DiscardHandler)

// benchTemporal starts the embedded Temporal server exactly as `assent dev`
// does (devtemporal, SQLite file, one history shard) and dials it.
func benchTemporal(b testing.TB, c *counts) client.Client {
	b.Helper()
	srv, err := devtemporal.Start(context.Background(), devtemporal.Options{
		UIPort: -1, DatabaseFile: filepath.Join(b.TempDir(), "temporal.db"), Namespace: "default", Logger: quiet})
	require.NoError(b, err)
	b.Cleanup(srv.Stop)
	tc, err := client.Dial(client.Options{HostPort: srv.FrontendAddress(), Namespace: "default", Logger: logging.SDK(quiet),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{c.rpcCounter()}}})
	require.NoError(b, err)
	b.Cleanup(tc.Close)
	return tc
}

// benchStack is the API, its worker and Temporal, with an agent key and
// the token of Bob, an approver.
type benchStack struct {
	store    *models.Store
	tc       client.Client
	url      string
	org      string
	key      string
	bobToken string
	http     *http.Client
	// counts are the stack's SQL statements, transactions and Temporal
	// RPCs, for what each operation costs.
	counts *counts
	// longPolls are the API's long-poll slots, to see how many it holds.
	longPolls *ratelimit.Slots
}

func newBenchStack(b testing.TB, kind string) *benchStack {
	return newBenchStackWith(b, kind, netguard.Public)
}

// newBenchStackWith admits receiver addresses by policy.
func newBenchStackWith(b testing.TB, kind string, policy *netguard.Policy) *benchStack {
	b.Helper()
	ctx := context.Background()
	db := testenv.OpenDB(b, kind)
	c := &counts{}
	c.countSQL(b, db)
	tc := benchTemporal(b, c)
	require.NoError(b, worker.RegisterSearchAttributes(ctx, tc, "default"))
	store := models.NewStore(db, testenv.Keys())
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(b, err)
	_, key, err := store.CreateKey(ctx, org.ID, "agent", models.KeyAgent, scopes.All)
	require.NoError(b, err)
	var bob *models.Member
	for _, m := range []struct{ email, role string }{{"ada@example.com", models.RoleOwner}, {"bob@example.com", models.RoleMember}} {
		bob, err = store.CreateMember(ctx, org.ID, m.email, "", m.role)
		require.NoError(b, err)
	}
	_, bobToken, err := store.CreateMemberToken(ctx, org.ID, bob.ID)
	require.NoError(b, err)
	// The people asked are emailed, into the mailbox assent dev keeps.
	w := worker.New(tc, worker.Deps{Kinds: app.Workers(), Store: store, BaseURL: "http://assent.test", Logger: quiet, NetPolicy: policy,
		Mailer: mail.NewMailbox(mail.DefaultMailboxSize)})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	longPolls := ratelimit.NewSlots(config.DefaultLongPollsPerKey, config.DefaultLongPolls)
	url := serveBench(b, store, tc, policy, longPolls)
	// Enough idle connections for every client: agents keep theirs alive,
	// and the default of 2 per host would measure TCP handshakes instead.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(hc.CloseIdleConnections)
	return &benchStack{store: store, tc: tc, url: url, org: org.ID, key: key, bobToken: bobToken, http: hc, counts: c, longPolls: longPolls}
}

// serveBench starts an API over store, with the process's default caps
// on long-polls unless longPolls says otherwise, and returns its URL.
func serveBench(b testing.TB, store *models.Store, tc client.Client, policy *netguard.Policy, longPolls *ratelimit.Slots) string {
	b.Helper()
	srv := httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test", LongPolls: longPolls,
		Services: app.Build(publishing(b, app.Deps{Store: store, Temporal: tc, Logger: quiet, NetPolicy: policy})).API()}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// call sends one request and returns the body, failing unless the status is want.
func (s *benchStack) call(method, path, body string, want int) ([]byte, error) {
	return s.callAs(s.key, method, path, body, want)
}

// callAs is call with another key or token.
func (s *benchStack) callAs(key, method, path, body string, want int) ([]byte, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	return out, err
}

// settle waits until the worker has persisted the first transition of every
// request of the kinds given (&approvals.Approval{}, …) created, so a worker
// that falls behind counts against the rate.
func (s *benchStack) settle(b testing.TB, kinds ...any) {
	b.Helper()
	for _, kind := range kinds {
		catchUp(b, func() bool {
			var n int64
			require.NoError(b, s.uncounted().Model(kind).Where("seq = 0").Count(&n).Error)
			return n == 0
		})
	}
}

// catchUp polls done, failing rather than hanging should the worker never
// catch up (a workflow failing on every retry, say).
func catchUp(b testing.TB, done func() bool) {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); !done(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the worker did not catch up within a minute")
		}
	}
}

// measure spreads b.N calls of op over clients goroutines, as that many
// concurrent clients would, runs settle inside the timed region, and
// reports the rate with the p50 and p99 of the client-side latency.
func measure(b *testing.B, clients int, op func(i int) error, settle func()) {
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				start := time.Now()
				if errs[c] = op(int(i)); errs[c] != nil {
					return
				}
				lat[c] = append(lat[c], time.Since(start))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(b, err)
	}
	settle()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	ms := func(q int) float64 { return float64(all[len(all)*q/100]) / float64(time.Millisecond) }
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(ms(50), "p50-ms")
	b.ReportMetric(ms(99), "p99-ms")
}

// BenchmarkBareStartWorkflow is the baseline: client.ExecuteWorkflow of a
// workflow that does nothing, run by a worker, on the same kind of server.
// Settling waits until the worker has run every one.
func BenchmarkBareStartWorkflow(b *testing.B) {
	c := &counts{}
	tc := benchTemporal(b, c)
	// The workflow counts itself so settling knows when every one has run;
	// a replay would count twice.
	var ran atomic.Int64
	noop := func(ctx workflow.Context) error {
		if !workflow.IsReplaying(ctx) {
			ran.Add(1)
		}
		return nil
	}
	w := sdkworker.New(tc, "bench-bare", sdkworker.Options{})
	w.RegisterWorkflowWithOptions(noop, workflow.RegisterOptions{Name: "BenchNoop"})
	require.NoError(b, w.Start())
	b.Cleanup(w.Stop)
	ctx := context.Background()
	// Plain is the StartWorkflow call the goal names; eager is the same with
	// eager start, which creates use, so both comparisons are on record.
	for _, eager := range []bool{false, true} {
		for _, clients := range benchClients {
			b.Run(fmt.Sprintf("eager=%t/clients=%d", eager, clients), func(b *testing.B) {
				want := ran.Load() + int64(b.N)
				before := c.snapshot()
				measure(b, clients, func(int) error {
					_, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "bench-bare", EnableEagerStart: eager}, "BenchNoop")
					return err
				}, func() { catchUp(b, func() bool { return ran.Load() >= want }) })
				c.report(b, before, b.N)
			})
		}
	}
}

// BenchmarkCreateApproval measures POST /api/v1/approvals: validation, the
// insert, the workflow start and, by settling, the worker's first write.
func BenchmarkCreateApproval(b *testing.B) {
	benchCreates(b, "/api/v1/approvals", &approvals.Approval{}, func(*testing.B, *benchStack) string { return benchBody })
}

// benchCreates measures creates of one kind on each database, at each
// number of clients, until the worker has written each one's first step:
// POST path with the body made for the stack, recorded as kind.
func benchCreates(b *testing.B, path string, kind any, body func(*testing.B, *benchStack) string) {
	for _, db := range testenv.Databases {
		b.Run(db, func(b *testing.B) {
			s := newBenchStack(b, db)
			sent := body(b, s)
			for _, clients := range benchClients {
				b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
					before := s.counts.snapshot()
					defer func() { s.counts.report(b, before, b.N) }()
					measure(b, clients, func(int) error {
						_, err := s.call("POST", path, sent, http.StatusCreated)
						return err
					}, func() { s.settle(b, kind) })
				})
			}
		})
	}
}

// BenchmarkGetApproval measures GET /api/v1/approvals/{id} over a set of
// settled approvals while the worker idles.
func BenchmarkGetApproval(b *testing.B) {
	for _, kind := range testenv.Databases {
		b.Run(kind, func(b *testing.B) {
			s := newBenchStack(b, kind)
			ids := make([]string, 100)
			for i := range ids {
				body, err := s.call("POST", "/api/v1/approvals", benchBody, http.StatusCreated)
				require.NoError(b, err)
				ids[i] = createdID(b, body)
			}
			s.settle(b, &approvals.Approval{})
			for _, clients := range benchClients {
				b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
					before := s.counts.snapshot()
					measure(b, clients, func(i int) error {
						_, err := s.call("GET", "/api/v1/approvals/"+ids[i%len(ids)], "", http.StatusOK)
						return err
					}, func() {})
					s.counts.report(b, before, b.N)
				})
			}
		})
	}
}

const benchCollectionBody = `{"title":"Quarterly budget","questions":[{"prompt":"Budget","kind":"number"}],"respondents":["bob@example.com"]}`

// BenchmarkCreateReview measures POST /api/v1/reviews of one published
// report, as BenchmarkCreateCollection measures collections; run it with
// BenchmarkBareStartWorkflow for its baseline.
func BenchmarkCreateReview(b *testing.B) {
	benchCreates(b, "/api/v1/reviews", &reviews.Review{}, func(b *testing.B, s *benchStack) string { return benchReviewBody(b, s) })
}

// benchReviewBody publishes a report and asks for its review.
func benchReviewBody(t testing.TB, s *benchStack) string {
	created, err := s.call("POST", "/api/v1/reports", `{"title":"Q3","content":"<h1>Q3</h1>","audience":["everyone"]}`, http.StatusCreated)
	require.NoError(t, err)
	var report struct{ ID string }
	require.NoError(t, json.Unmarshal(created, &report))
	return `{"title":"Check the quarter","reportId":"` + report.ID + `","reviewers":["bob@example.com"]}`
}

// BenchmarkCreateCollection measures POST /api/v1/collections as
// BenchmarkCreateApproval measures approvals: validation, the respondents'
// resolution, the insert, the workflow start and, by settling, the
// worker's first write. Run it with BenchmarkBareStartWorkflow for its
// baseline.
func BenchmarkCreateCollection(b *testing.B) {
	benchCreates(b, "/api/v1/collections", &collections.Collection{}, func(*testing.B, *benchStack) string { return benchCollectionBody })
}
