// Command assent-load fills Assent's production shape (deploy/local's
// cluster: PostgreSQL, Temporal's services, two serve behind a proxy, two
// workers) with a backlog of open requests and measures it with that
// backlog, against the same measures taken before the fill (issue 40):
//
//	go run ./cmd/assent-load --dir .assent-load --count 100000
//
// The fill is resumable: the cluster, its people and keys and the count so
// far stay in --dir, so a later run goes on where one stopped. The report
// is printed and written to --dir/report.md; docs/benchmarks.md holds a run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/models"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "assent-load:", err)
		os.Exit(1)
	}
}

type options struct {
	dir         string
	count       int
	people      int
	fillClients int
	clients     int
	samples     int
	keep        bool
	// fillUntil, when set, ends the fill at that time short of count, so
	// a run fits the time it has; the report says how many it reached.
	fillUntil time.Time
	// asIs measures the cluster as it stands: no fill, no wait for the
	// workers, no probe through them.
	asIs bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("assent-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.dir, "dir", ".assent-load", "folder for the cluster and the load's state (a later run resumes)")
	fs.IntVar(&o.count, "count", 100000, "open requests to fill the cluster with")
	fs.IntVar(&o.people, "people", 200, "members the requests ask")
	fs.IntVar(&o.fillClients, "fill-clients", 4, "concurrent clients creating requests (more than the machine serves make the fill slower: docs/benchmarks.md)")
	fs.IntVar(&o.clients, "clients", 16, "concurrent clients of each read measure")
	fs.IntVar(&o.samples, "samples", 3000, "reads per measure")
	fillFor := fs.Duration("fill-for", 0, "stop filling after this long, short of --count if need be (0: no limit)")
	fs.BoolVar(&o.asIs, "as-is", false, "measure the backlog as it stands: no more fill, no wait for the workers to catch up, no probe through them")
	fs.BoolVar(&o.keep, "keep", false, "leave the cluster running (stop it with go run ./deploy/local down --dir DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fillFor > 0 {
		o.fillUntil = time.Now().Add(*fillFor)
	}
	if o.count < 1000 {
		return errors.New("--count must be at least 1000")
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}

	st, err := loadState(o.dir)
	if err != nil {
		return err
	}
	rcv, err := startReceiver(st.ReceiverAddr)
	if err != nil {
		return err
	}
	defer rcv.close()
	st.ReceiverAddr = rcv.addr

	logf("starting the cluster in %s", o.dir)
	c, err := cluster.Start(ctx, cluster.Options{Dir: o.dir, Progress: stderr,
		// The load's own receiver, on this machine, takes the webhooks and callbacks.
		AssentEnv: []string{"ASSENT_RECEIVER_NETWORKS=127.0.0.1/32"}})
	if err != nil {
		return err
	}
	if !o.keep {
		defer c.Stop()
	}
	db, err := models.Open(c.Addresses().Postgres)
	if err != nil {
		return err
	}
	defer models.Close(db)
	l := &load{o: o, c: c, st: st, rcv: rcv, logf: logf, base: c.Addresses().Assent, db: db}
	if err := l.setup(ctx); err != nil {
		return err
	}
	if st.Empty == nil {
		// "Empty": a first thousand requests, so reads have something to read.
		if err := l.fill(ctx, 1000); err != nil {
			return err
		}
		if err := l.drain(ctx); err != nil {
			return err
		}
		m, err := l.measure(ctx, "empty")
		if err != nil {
			return err
		}
		st.Empty = m
		if err := st.save(o.dir); err != nil {
			return err
		}
	}
	if !o.asIs {
		// A backlog an earlier run left to the workers is worked off
		// first, so the fill's creates do not time out behind it.
		if err := l.drain(ctx); err != nil {
			return err
		}
		if err := l.fill(ctx, o.count); err != nil {
			return err
		}
		if err := l.drain(ctx); err != nil {
			return err
		}
	}
	full, err := l.measure(ctx, "backlog")
	if err != nil {
		return err
	}
	full.Plans, err = l.plans(ctx)
	if err != nil {
		return err
	}
	full.Restart, err = l.restartWorkers(ctx)
	if err != nil {
		return err
	}
	st.Backlog = full
	if err := st.save(o.dir); err != nil {
		return err
	}
	report := l.report()
	fmt.Fprint(stdout, report)
	return os.WriteFile(o.dir+"/report.md", []byte(report), 0o644)
}
