// Package crashtest kills `assent dev` with SIGKILL under a mixed load of
// agents and people, restarts it on the same data directory, and checks
// that nothing any client was told was lost, doubled or contradicted; it
// does the same to each process of the production cluster
// (cluster_test.go). See docs/reliability.md.
package crashtest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// TestCrashSafety runs ASSENT_CRASH_KILLS kills (3 unless set) with the
// seed ASSENT_CRASH_SEED (random unless set; printed, so a failing run can
// be repeated) and writes its figures to ASSENT_CRASH_REPORT when set.
func TestCrashSafety(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the crash test runs assent dev for a minute or more")
	}
	kills := envInt("ASSENT_CRASH_KILLS", 3)
	seed := crashSeed(t)
	t.Logf("crash test: seed %d, %d kills (repeat with ASSENT_CRASH_SEED=%d ASSENT_CRASH_KILLS=%d)", seed, kills, seed, kills)

	svc := newService(t, assentbin.For(t))
	svc.start()
	// Retries come 0.2, 0.8, 3.2 s apart (ASSENT_DEV_RETRY_UNIT=200ms).
	rcv := newReceiver(t, 10, 90*time.Second)
	r := runUnderFaults(t, svc, rcv, seed, func(rng *rand.Rand) map[string]int {
		for k := range kills {
			time.Sleep(time.Duration(2000+rng.IntN(6000)) * time.Millisecond)
			t.Logf("kill %d of %d", k+1, kills)
			svc.kill()
			svc.start()
		}
		return map[string]int{"assent dev": kills}
	}, nil)
	svc.stop()
	assertNothingLost(t, r)
}

// crashSeed is ASSENT_CRASH_SEED, or a new one.
func crashSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ASSENT_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "ASSENT_CRASH_SEED")
	}
	return seed
}

// runUnderFaults runs eight clients of mixed load against svc while
// faults kills and restarts its processes (returning how often each
// kind), lets the load drain and checks what it was told (finish).
func runUnderFaults(t *testing.T, svc target, rcv *receiver, seed uint64, faults func(*rand.Rand) map[string]int, note func(*report)) *report {
	l, stop := startLoad(t, svc, rcv, seed, 8, time.Hour)
	killed := faults(rand.New(rand.NewPCG(seed, 1000)))
	time.Sleep(3 * time.Second)
	stop()
	return l.finish(t, rcv, seed, killed, note)
}

// startLoad subscribes the receiver and starts clients of mixed load
// against svc, whose requests wait up to patience (a quarter expire
// within seconds); stop ends them and waits for each.
func startLoad(t *testing.T, svc target, rcv *receiver, seed uint64, clients int, patience time.Duration) (l *load, stop func()) {
	l = &load{svc: svc, receiver: rcv.srv.URL, client: &http.Client{Timeout: 30 * time.Second}, giveUp: 3 * time.Minute,
		delegations: newDelegations(), patience: patience}
	hook := &op{kind: "webhook", path: "/api/v1/admin/webhooks", token: svc.keys().AdminKey, key: "receiver",
		body: `{"url":"` + rcv.srv.URL + `/webhook"}`}
	l.send(hook)
	require.Equal(t, http.StatusCreated, hook.status, string(hook.respBody))
	require.NoError(t, l.registerGateAction())
	l.ops = nil
	require.NoError(t, l.publishReviewReports(2))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run(ctx, rand.New(rand.NewPCG(seed, uint64(i))))
		}()
	}
	return l, func() { cancel(); wg.Wait() }
}

// finish checks what the stopped load was told against its target, with
// note (when not nil) adding what only the target knows. The report is
// logged, and written to ASSENT_CRASH_REPORT when set.
func (l *load) finish(t *testing.T, rcv *receiver, seed uint64, killed map[string]int, note func(*report)) *report {
	r := &report{Seed: seed, KillsOf: killed}
	for _, n := range killed {
		r.Kills += n
	}
	require.NoError(t, l.check(context.Background(), rcv, r))
	if note != nil {
		note(r)
	}
	// The problems first, ahead of the long report a truncated log cuts.
	if len(r.Problems) > 0 {
		t.Logf("crash test problems:\n%s", strings.Join(r.Problems, "\n"))
	}
	out, _ := json.MarshalIndent(r, "", "  ")
	t.Logf("crash test report:\n%s", out)
	if path := os.Getenv("ASSENT_CRASH_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, append(out, '\n'), 0o644))
	}
	return r
}

// assertNothingLost holds the report to what the load must have done and
// every figure to zero.
func assertNothingLost(t *testing.T, r *report) {
	assert.NotZero(t, r.Ops[opCreate], "the load created nothing: the test proved nothing")
	assert.NotZero(t, r.Ops[opDecide], "the load decided nothing: the test proved nothing")
	assert.NotZero(t, r.Ops[opCreateCollection], "the load created no collection: the test proved nothing")
	assert.NotZero(t, r.Ops[opReply], "the load submitted no reply: the test proved nothing")
	assert.NotZero(t, r.Ops[opPublishVersion], "the load published no version: the test proved nothing")
	assert.NotZero(t, r.Ops[opCreateReview], "the load created no review: the test proved nothing")
	assert.NotZero(t, r.Ops[opVerdict], "the load returned no verdict: the test proved nothing")
	assert.NotZero(t, r.Ops[opGate], "the load asked the gate nothing: the test proved nothing")
	assert.NotZero(t, r.MandateUses, "the mandate allowed nothing: the test proved nothing of mandates")
	assert.NotZero(t, r.Ops[opReceipt], "the load reported no execution: the test proved nothing of receipts")
	assert.NotZero(t, r.Twins, "the load sent no key twice at once: the test proved nothing of concurrent attempts")
	assert.NotZero(t, r.Ops[opDelegate], "nobody went away: the test proved nothing of delegation")
	for name, n := range map[string]int{"lost": r.Lost, "duplicates": r.Duplicates, "divergences": r.Divergences,
		"unacknowledged": r.Unacknowledged, "actions not reflected": r.ActionsNotReflected, "pending past expiry": r.PendingPastExpiry,
		"missing events": r.MissingEvents, "split deliveries": r.SplitDeliveries, "unexpected events": r.UnexpectedEvents,
		"replay mismatches": r.ReplayMismatches, "completion mismatches": r.CompletionMismatches,
		"outbox mismatches": r.OutboxMismatches, "audit gaps": r.AuditGaps, "reminders wrong": r.RemindersWrong,
		"gate mismatches": r.GateMismatches, "receipt mismatches": r.ReceiptMismatches, "5xx other than 502 and 503": r.ServerErrors,
		"twin mismatches": r.TwinMismatches, "refused but done": r.RefusedButDone, "not handed over": r.NotHandedOver,
		"request rows out of step": r.RequestRowsOutOfStep} {
		assert.Zero(t, n, name)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}
