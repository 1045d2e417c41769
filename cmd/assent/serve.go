package main

import (
	"context"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/models"
)

// runServe runs the API and pages only. It keeps no state of its own, so
// several can run behind a load balancer.
func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, err := parse("serve", args, stderr)
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
	store := models.NewStore(db)
	tc, err := dialTemporal(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	l, baseURL, err := listen(cfg)
	if err != nil {
		return err
	}
	log.Info("serving", "address", l.Addr().String(), "baseUrl", baseURL)
	handler := api.New(api.Deps{Store: store, Temporal: tc, Logger: log, BaseURL: baseURL})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return serveHTTP(gctx, l, handler, log) })
	g.Go(func() error { purgeIdempotencyKeys(gctx, store, log); return nil })
	return g.Wait()
}
