package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/worker"
)

// reconcileInterval is how often a worker looks for approvals whose
// workflow start was lost.
const reconcileInterval = 5 * time.Minute

// dispatchInterval is the outbox dispatcher's pause when it finds nothing.
const dispatchInterval = 200 * time.Millisecond

// runWorker runs the Temporal worker until interrupted.
func runWorker(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, err := parse("worker", args, stderr)
	if err != nil {
		return err
	}
	db, err := openDB(cfg, log)
	if err != nil {
		return err
	}
	defer models.Close(db)
	if err := models.RequireMigrated(db); err != nil {
		return err
	}
	tc, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := worker.RegisterSearchAttributes(ctx, tc, cfg.TemporalNamespace); err != nil {
		return err
	}
	if cfg.BaseURL == "" {
		log.Warn("ASSENT_BASE_URL is not set: page links in events will be relative")
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return err
	}
	store := models.NewStore(db)
	w := worker.New(tc, worker.Deps{Store: store, BaseURL: cfg.PublicBaseURL(), Logger: log, Mailer: mailer})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "namespace", cfg.TemporalNamespace)
	dispatcher := &worker.Dispatcher{Client: tc, Store: store, Log: log, Interval: dispatchInterval}
	go dispatcher.Run(ctx)
	worker.RunReconciler(ctx, tc, store, log, reconcileInterval)
	log.Info("stopping worker")
	w.Stop()
	return nil
}
