package api_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestWhatACreateCosts holds one create of each kind, with its worker's
// first write and the email to the person it asks, to the statements,
// transactions and Temporal RPCs docs/benchmarks.md counts, so that a
// change adding a round trip shows here, where it is cheap to see. A
// change that removes one updates both.
func TestWhatACreateCosts(t *testing.T) {
	// Statements on SQLite and on PostgreSQL (which tells the other
	// processes of the change with one more, pg_notify), then
	// transactions: the create's and the first write's.
	want := map[string]struct{ sqlite, postgres, tx int64 }{
		"approval":   {15, 16, 2},
		"collection": {14, 15, 2},
		"review":     {18, 19, 2},
	}
	for _, db := range testenv.Databases {
		t.Run(db, func(t *testing.T) {
			s := newBenchStack(t, db)
			creates := []struct{ kind, path, body string }{
				{"approval", "/api/v1/approvals", benchBody},
				{"collection", "/api/v1/collections", benchCollectionBody},
				{"review", "/api/v1/reviews", benchReviewBody(t, s)},
			}
			for _, c := range creates {
				// The first of a kind writes what later ones find (the
				// organisation's audit head among them).
				s.createAndWait(t, c.path, c.body)
				before := s.counts.snapshot()
				s.createAndWait(t, c.path, c.body)
				after := s.counts.snapshot()
				rpc := map[string]int64{}
				for m, n := range after.rpc {
					if d := n - before.rpc[m]; d > 0 {
						rpc[m] = d
					}
				}
				w := want[c.kind]
				sql := map[string]int64{"sqlite": w.sqlite, "postgres": w.postgres}[db]
				assert.Equal(t, sql, after.sql-before.sql, "statements of a %s's create (list them with the benchmark and ASSENT_BENCH_SQL_LOG=1)", c.kind)
				assert.Equal(t, w.tx, after.tx-before.tx, "transactions of a %s's create", c.kind)
				assert.Equal(t, map[string]int64{"StartWorkflowExecution": 1, "RespondWorkflowTaskCompleted": 1},
					rpc, "a %s costs Temporal its start and one workflow task before anyone acts, as a bare start does", c.kind)
			}
		})
	}
}

// createAndWait creates a request and waits until its worker has
// completed its first workflow task, which writes "created" and emails:
// every statement of the create, the first write and its email has run by
// then.
func (s *benchStack) createAndWait(t *testing.T, path, body string) {
	t.Helper()
	before := s.counts.snapshot()
	_, err := s.call("POST", path, body, http.StatusCreated)
	require.NoError(t, err)
	done := func() bool {
		now := s.counts.snapshot()
		return now.rpc["RespondWorkflowTaskCompleted"]-before.rpc["RespondWorkflowTaskCompleted"] >= 1
	}
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			now := s.counts.snapshot()
			t.Fatalf("the worker did not finish the create's first steps: RPCs %v", fmt.Sprint(slices.Sorted(maps.Keys(now.rpc))))
		}
	}
}
