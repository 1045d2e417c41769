package main

import (
	"context"
	"fmt"
	"io"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/worker"
)

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
	w := worker.New(tc)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "namespace", cfg.TemporalNamespace)
	<-ctx.Done()
	log.Info("stopping worker")
	w.Stop()
	return nil
}
