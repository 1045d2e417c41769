package main

import (
	"context"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/internal/buildinfo"
	"github.com/assent-hq/assent/internal/metrics"
)

// runServe runs the API and pages only. It keeps no state of its own, so
// several can run behind a load balancer.
func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, log, err := parse("serve", args, stderr)
	if err != nil {
		return err
	}
	stopTracing, err := startTracing(ctx, "serve", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	// Listen first, so a taken port is the first and only thing reported.
	l, baseURL, err := listen(cfg)
	if err != nil {
		return err
	}
	defer l.Close()
	ml, err := listenMetrics(cfg)
	if err != nil {
		return err
	}
	if ml != nil {
		defer ml.Close()
	}
	if err := cfg.RequireBaseURL(); err != nil {
		return err
	}
	policy, err := cfg.NetPolicy()
	if err != nil {
		return err
	}
	m := metrics.New()
	defer m.Close()
	r, err := open(ctx, cfg, log, needs{temporal: true, mailer: true, publishing: true, metrics: m})
	if err != nil {
		return err
	}
	defer r.Close()
	log.Info("serving", "address", l.Addr().String(), "baseUrl", baseURL, "version", buildinfo.Version())
	if cfg.BlobURL == "" {
		log.Warn("ASSENT_BLOB_URL is not set: report files are kept in " + cfg.BlobDir() + ", which only this process sees; set it to S3-compatible storage when more than one assent serve runs")
	}
	svc := r.services(log, baseURL, policy, cfg.SlackAPIURL)
	// Decision tokens name the instance by its public address, as the
	// worker's do; receipts accept only those.
	svc.Gate.SetIssuer(cfg.PublicBaseURL())
	svc.Receipts.SetIssuer(cfg.PublicBaseURL())
	handler, pages, err := r.handler(cfg, log, baseURL, svc, nil, nil)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := serveHTTP(lameDuck(gctx, svc.Instance.Stop), l, handler, log, r.store.Changes().Drain)
		pages.Wait()
		return err
	})
	serveMetrics(gctx, g, ml, m, cfg.MetricsToken, log)
	if ml == nil && !metricsOnAPI(cfg, false) {
		log.Info("metrics are not served: set ASSENT_METRICS_ADDR to serve them on an address of their own, or ASSENT_METRICS_TOKEN to serve them on this listener to whoever bears it")
	}
	runBackground(gctx, g, log, r.store, svc.Reports)
	// Long-polls here hear at once of requests settled by the worker or
	// another serve.
	g.Go(func() error { r.store.Listen(gctx, log); return nil })
	return g.Wait()
}
