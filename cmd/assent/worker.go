package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/buildinfo"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
)

// dispatchInterval is the outbox dispatcher's pause when it finds nothing.
const dispatchInterval = 200 * time.Millisecond

// makeCurrentWithin bounds how long a versioned worker waits to become its
// deployment's current version before it gives up starting.
const makeCurrentWithin = 2 * time.Minute

// runWorker runs the Temporal worker until interrupted, with its probes
// and metrics on ASSENT_WORKER_HTTP_ADDR.
func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, err := parse("worker", args, stderr)
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, "worker", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if err := cfg.RequireBaseURL(); err != nil {
		return err
	}
	if err := cfg.CheckWorkerDeployment(); err != nil {
		return err
	}
	policy, err := cfg.NetPolicy()
	if err != nil {
		return err
	}
	m := metrics.New()
	defer m.Close()
	r, err := open(ctx, cfg, log, needs{temporal: true, searchAttributes: true, mailer: true, metrics: m})
	if err != nil {
		return err
	}
	defer r.Close()
	readDatabase(m, r.store)
	svc := r.services(log, cfg.PublicBaseURL(), policy, cfg.SlackAPIURL)
	// Listened on once the database and Temporal are open, so a refusal of
	// either is what a failed start reports.
	g, gctx := errgroup.WithContext(ctx)
	if cfg.WorkerHTTPAddr != config.Off {
		l, err := listenPort(workerPort(cfg))
		if err != nil {
			return err
		}
		defer l.Close()
		var served http.Handler
		if cfg.MetricsAddr == "" {
			served = m.Handler(cfg.MetricsToken)
		}
		log.Info("serving probes", "address", l.Addr().String(), "metrics", served != nil)
		g.Go(func() error { return serveHTTP(gctx, l, api.Probes(log, svc.Instance, served), log) })
	}
	ml, err := listenMetrics(cfg)
	if err != nil {
		return err
	}
	if ml != nil {
		defer ml.Close()
	}
	serveMetrics(gctx, g, ml, m, cfg.MetricsToken, log)

	var deployment worker.Deployment
	if cfg.WorkerDeployment != "" {
		deployment = worker.Deployment{Name: cfg.WorkerDeployment, BuildID: buildinfo.BuildID()}
	}
	w := worker.New(r.temporal, worker.Deps{Kinds: app.Workers(), Store: r.store, BaseURL: cfg.PublicBaseURL(), Logger: log, NetPolicy: policy, Mailer: r.mailer,
		PushSubject: pushSubject(cfg, cfg.PublicBaseURL()), SlackAPIURL: cfg.SlackAPIURL, Deployment: deployment})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	if deployment.Name != "" {
		// Started once Temporal routes the deployment's tasks to this
		// build, so a rolling deploy stops the next worker only then.
		current, cancel := context.WithTimeout(ctx, makeCurrentWithin)
		err := worker.MakeCurrent(current, r.temporal, cfg.TemporalNamespace, deployment, log)
		cancel()
		if err != nil {
			w.Stop()
			return err
		}
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "namespace", cfg.TemporalNamespace, "version", buildinfo.Version(),
		"deployment", deployment.Name, "buildId", deployment.BuildID)
	mendEarlierVersions(gctx, log, svc.Reports)
	dispatcher := &worker.Dispatcher{Client: r.temporal, Store: r.store, Log: log, Interval: dispatchInterval}
	go dispatcher.Run(gctx)
	requests.RunReconciler(gctx, log, svc.Owned()...)
	log.Info("stopping worker")
	w.Stop()
	return g.Wait()
}
