package api_test

// What one operation costs in round trips, counted while benchmarks run:
// SQL statements and transactions on the application database, and
// Temporal RPCs by method (long polls apart, which wait rather than work).

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"gorm.io/gorm"
)

// counts is what a stack has done since it started.
type counts struct {
	sql, tx atomic.Int64
	mu      sync.Mutex
	rpc     map[string]int64
}

// snapshot is counts at one moment.
type snapshot struct {
	sql, tx int64
	rpc     map[string]int64
}

func (c *counts) snapshot() snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return snapshot{sql: c.sql.Load(), tx: c.tx.Load(), rpc: maps.Clone(c.rpc)}
}

// countSQL counts every statement db runs and every transaction it
// begins.
func (c *counts) countSQL(b testing.TB, db *gorm.DB) {
	logSQL := os.Getenv("ASSENT_BENCH_SQL_LOG") != ""
	count := func(db *gorm.DB) {
		if ctx := db.Statement.Context; ctx != nil && ctx.Value(uncountedKey{}) != nil {
			return
		}
		if db.DryRun {
			return // a subquery GORM builds into its statement, not sent
		}
		c.sql.Add(1)
		if logSQL {
			fmt.Fprintln(os.Stderr, "sql:", db.Statement.SQL.String())
		}
	}
	cb := db.Callback()
	for name, err := range map[string]error{
		"create": cb.Create().After("gorm:create").Register("bench:count", count),
		"query":  cb.Query().After("gorm:query").Register("bench:count", count),
		"update": cb.Update().After("gorm:update").Register("bench:count", count),
		"delete": cb.Delete().After("gorm:delete").Register("bench:count", count),
		"row":    cb.Row().After("gorm:row").Register("bench:count", count),
		"raw":    cb.Raw().After("gorm:raw").Register("bench:count", count),
	} {
		if err != nil {
			b.Fatalf("count %s statements: %v", name, err)
		}
	}
	pool, ok := db.ConnPool.(*sql.DB)
	if !ok {
		b.Fatalf("the database's pool is a %T", db.ConnPool)
	}
	db.ConnPool = &countingPool{DB: pool, tx: &c.tx}
	db.Statement.ConnPool = db.ConnPool
}

// uncounted is the stack's database for the benchmark's own queries (its
// waits for the worker), which are not the operation's cost.
func (s *benchStack) uncounted() *gorm.DB {
	return s.store.DB().WithContext(context.WithValue(context.Background(), uncountedKey{}, true))
}

// uncountedKey marks a statement's context as the benchmark's own.
type uncountedKey struct{}

// countingPool counts the transactions begun on its database.
type countingPool struct {
	*sql.DB
	tx *atomic.Int64
}

// BeginTx is gorm.ConnPoolBeginner's.
func (p *countingPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	p.tx.Add(1)
	return p.DB.BeginTx(ctx, opts)
}

// GetDBConn lets db.DB() find the database.
func (p *countingPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// rpcCounter counts the Temporal RPCs a client sends, by method.
func (c *counts) rpcCounter() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if name := path.Base(method); !strings.HasPrefix(name, "Poll") {
			c.mu.Lock()
			if c.rpc == nil {
				c.rpc = map[string]int64{}
			}
			c.rpc[name]++
			c.mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// report reports what each of n operations cost since before, and writes
// the RPCs by method to stderr (a benchmark's log is cut short).
func (c *counts) report(b *testing.B, before snapshot, n int) {
	after := c.snapshot()
	per := func(d int64) float64 { return float64(d) / float64(n) }
	b.ReportMetric(per(after.sql-before.sql), "sql/op")
	b.ReportMetric(per(after.tx-before.tx), "tx/op")
	var total int64
	var lines []string
	for _, m := range slices.Sorted(maps.Keys(after.rpc)) {
		if d := after.rpc[m] - before.rpc[m]; d > 0 {
			total += d
			lines = append(lines, fmt.Sprintf("%s %.2f", m, per(d)))
		}
	}
	b.ReportMetric(per(total), "rpc/op")
	fmt.Fprintf(os.Stderr, "%s: Temporal RPCs per op: %s\n", b.Name(), strings.Join(lines, ", "))
}
