package api_test

// Benchmarks of deliveries on the stack `assent dev` runs, with receivers
// on this machine admitted. Results: docs/benchmarks.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/webhook"
	"github.com/assent-hq/assent/worker"
	"github.com/assent-hq/assent/workflows"
)

// deliveryBenchStack is the bench stack with the dispatcher `assent dev`
// runs (200 ms between empty rounds).
func deliveryBenchStack(b *testing.B, kind string) *benchStack {
	s := newBenchStackWith(b, kind, netguard.DevLoopback)
	ctx, cancel := context.WithCancel(context.Background())
	d := &worker.Dispatcher{Client: s.tc, Store: s.store, Log: quiet, Interval: 200 * time.Millisecond}
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	return s
}

// BenchmarkDecisionToCallback times a person's decision, from the POST
// until the request's callback receiver has the approval.approved event.
func BenchmarkDecisionToCallback(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			s := deliveryBenchStack(b, kind)
			var mu sync.Mutex
			arrived := map[string]chan time.Time{}
			waiter := func(id string) chan time.Time {
				mu.Lock()
				defer mu.Unlock()
				if arrived[id] == nil {
					arrived[id] = make(chan time.Time, 1)
				}
				return arrived[id]
			}
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				at := time.Now()
				var body struct{ RequestID string }
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &body)
				waiter(body.RequestID) <- at
			}))
			b.Cleanup(recv.Close)

			lat := make([]time.Duration, 0, b.N)
			var slow []slowDecision
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				out, err := s.call("POST", "/api/v1/approvals", fmt.Sprintf(`{"title":"Pay","approvers":["bob@example.com"],"callbackUrl":%q}`, recv.URL), 201)
				require.NoError(b, err)
				var a struct{ ID string }
				require.NoError(b, json.Unmarshal(out, &a))
				got := waiter(a.ID)
				b.StartTimer()
				start := time.Now()
				_, err = s.callAs(s.bobToken, "POST", "/api/v1/approvals/"+a.ID+"/decision", `{"decision":"approve"}`, 200)
				require.NoError(b, err)
				select {
				case at := <-got:
					lat = append(lat, at.Sub(start))
					if at.Sub(start) > slowCallback {
						slow = append(slow, slowDecision{id: a.ID, start: start, took: at.Sub(start)})
					}
				case <-time.After(30 * time.Second):
					b.Fatal("no callback within 30 s")
				}
			}
			b.StopTimer()
			// To stderr: a benchmark's log is cut at its first lines.
			for _, d := range slow {
				fmt.Fprintf(os.Stderr, "slow decision %s (%s):\n%s\n", d.id, d.took.Round(time.Millisecond), explainSlow(s, d))
			}
			reportLatencies(b, lat)
		})
	}
}

// slowCallback is a decision → callback time worth explaining:
// ASSENT_BENCH_EXPLAIN_MS, else half a second.
var slowCallback = func() time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("ASSENT_BENCH_EXPLAIN_MS")); err == nil {
		return time.Duration(ms) * time.Millisecond
	}
	return 500 * time.Millisecond
}()

// slowDecision is one decision whose callback came late.
type slowDecision struct {
	id    string
	start time.Time
	took  time.Duration
}

// explainSlow is where a slow decision's time went, each step's time
// since the decision was posted: the approval workflow's history events,
// the approval.approved outbox event and its delivery's fan-out, and the
// delivery workflow's history.
func explainSlow(s *benchStack, d slowDecision) string {
	ctx := context.Background()
	type line struct {
		at   time.Time
		what string
	}
	var steps []line
	step := func(at time.Time, what string) { steps = append(steps, line{at, what}) }
	history := func(workflowID string) {
		it := s.tc.GetWorkflowHistory(ctx, workflowID, "", false, 0)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				step(time.Now(), "history of "+workflowID+": "+err.Error())
				return
			}
			if at := e.GetEventTime().AsTime(); !at.Before(d.start.Add(-time.Second)) {
				step(at, workflowID+" "+e.GetEventType().String())
			}
		}
	}
	history(approvals.WorkflowID(d.id))
	var rows []struct {
		EventID, DeliveryID string
		EventAt, DeliveryAt time.Time
		Sends               int
	}
	_ = s.store.DB().Raw(`SELECT events.id AS event_id, events.created_at AS event_at, deliveries.id AS delivery_id,
		deliveries.created_at AS delivery_at, deliveries.sends FROM events JOIN deliveries ON deliveries.event_id = events.id
		WHERE events.subject_id = ? AND events.kind = ?`, d.id, events.ApprovalApproved).Scan(&rows).Error
	for _, r := range rows {
		step(r.EventAt, "outbox event "+r.EventID+" written")
		step(r.DeliveryAt, "delivery "+r.DeliveryID+" fanned out")
		history(workflows.DeliveryWorkflowID(r.DeliveryID, r.Sends))
	}
	step(d.start.Add(d.took), "callback received")
	slices.SortStableFunc(steps, func(a, b line) int { return a.at.Compare(b.at) })
	out := make([]string, len(steps))
	for i, l := range steps {
		out[i] = fmt.Sprintf("  %+9.1f ms  %s", float64(l.at.Sub(d.start))/float64(time.Millisecond), l.what)
	}
	return strings.Join(out, "\n")
}

// reportLatencies reports lat's median, 99th percentile and mean.
func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(ms(lat[len(lat)*50/100]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(ms(sum/time.Duration(len(lat))), "mean-ms")
}

// BenchmarkReplyToCallback times a respondent's reply that completes a
// collection, from the POST until the collection's callback receiver has
// the signed collection.completed event.
func BenchmarkReplyToCallback(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			s := deliveryBenchStack(b, kind)
			var mu sync.Mutex
			arrived := map[string]chan time.Time{}
			waiter := func(id string) chan time.Time {
				mu.Lock()
				defer mu.Unlock()
				if arrived[id] == nil {
					arrived[id] = make(chan time.Time, 1)
				}
				return arrived[id]
			}
			secrets := map[string]string{}
			var bad atomic.Int64
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				at := time.Now()
				var body struct{ RequestID string }
				raw, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(raw, &body)
				mu.Lock()
				secret := secrets[body.RequestID]
				mu.Unlock()
				// It counts only what a receiver may trust, a completion
				// signed with the collection's secret; the arrival time is
				// taken before the check.
				if r.Header.Get(webhook.HeaderEvent) != events.CollectionCompleted ||
					webhook.Verify(r.Header.Get(webhook.HeaderSignature), raw, secret, time.Now(), webhook.DefaultTolerance) != nil {
					bad.Add(1)
					return
				}
				waiter(body.RequestID) <- at
			}))
			b.Cleanup(recv.Close)

			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				out, err := s.call("POST", "/api/v1/collections", fmt.Sprintf(
					`{"title":"Budget","questions":[{"id":"budget","prompt":"Budget","kind":"number"}],"respondents":["bob@example.com"],"callbackUrl":%q}`,
					recv.URL), 201)
				require.NoError(b, err)
				var c struct{ ID, CallbackSecret string }
				require.NoError(b, json.Unmarshal(out, &c))
				mu.Lock()
				secrets[c.ID] = c.CallbackSecret
				mu.Unlock()
				got := waiter(c.ID)
				b.StartTimer()
				start := time.Now()
				_, err = s.callAs(s.bobToken, "POST", "/api/v1/collections/"+c.ID+"/replies", `{"answers":{"budget":1200},"submit":true}`, 200)
				require.NoError(b, err)
				select {
				case at := <-got:
					lat = append(lat, at.Sub(start))
				case <-time.After(30 * time.Second):
					b.Fatalf("no signed collection.completed callback within 30 s (%d refused)", bad.Load())
				}
			}
			b.StopTimer()
			require.Zero(b, bad.Load(), "callbacks that were not a signed collection.completed")
			reportLatencies(b, lat)
		})
	}
}

// BenchmarkDeliveriesPerSecond writes b.N outbox events at once and times
// them until a local webhook receiver has every one.
func BenchmarkDeliveriesPerSecond(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			s := deliveryBenchStack(b, kind)
			var got atomic.Int64
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
			b.Cleanup(recv.Close)
			ctx := context.Background()
			var org models.Organization
			require.NoError(b, s.store.DB().Take(&org).Error)
			_, err := s.store.CreateWebhookEndpoint(ctx, org.ID, models.NewWebhookEndpoint{URL: recv.URL, Format: models.FormatJSON,
				Enabled: true, Secret: "whsec_bench"})
			require.NoError(b, err)

			evs := make([]models.Event, b.N)
			now := models.Now()
			for i := range evs {
				evs[i] = models.Event{ID: ids.New(ids.Event), OrganizationID: org.ID, Kind: events.ApprovalRequested,
					SubjectType: "approval", SubjectID: "apr_bench", Data: models.RawJSON(`{"id":"apr_bench"}`), CreatedAt: now}
			}
			b.ResetTimer()
			require.NoError(b, s.store.DB().CreateInBatches(evs, 500).Error)
			catchUp(b, func() bool { return got.Load() >= int64(b.N) })
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}
