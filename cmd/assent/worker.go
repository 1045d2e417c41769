package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
)

// dispatchInterval is the outbox dispatcher's pause when it finds nothing.
const dispatchInterval = 200 * time.Millisecond

// runWorker runs the Temporal worker until interrupted.
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
	policy, err := cfg.NetPolicy()
	if err != nil {
		return err
	}
	r, err := open(ctx, cfg, log, needs{temporal: true, searchAttributes: true, mailer: true})
	if err != nil {
		return err
	}
	defer r.Close()
	w := worker.New(r.temporal, worker.Deps{Store: r.store, BaseURL: cfg.PublicBaseURL(), Logger: log, NetPolicy: policy, Mailer: r.mailer,
		PushSubject: pushSubject(cfg, cfg.PublicBaseURL()), SlackAPIURL: cfg.SlackAPIURL})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "namespace", cfg.TemporalNamespace)
	dispatcher := &worker.Dispatcher{Client: r.temporal, Store: r.store, Log: log, Interval: dispatchInterval}
	go dispatcher.Run(ctx)
	requests.RunReconciler(ctx, log, r.services(log, cfg.PublicBaseURL(), policy, cfg.SlackAPIURL).Owned()...)
	log.Info("stopping worker")
	w.Stop()
	return nil
}
