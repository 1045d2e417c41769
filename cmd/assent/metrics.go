package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/metrics"
	"github.com/assent-hq/assent/models"
)

// readingsEvery bounds how often a process reads the database for the
// gauges that count the whole instance (open requests, the outbox's lag),
// however often it is scraped.
const readingsEvery = 15 * time.Second

// metricsPort is the address of the listener of metrics alone.
func metricsPort(cfg *config.Config) port {
	return port{cfg.MetricsAddr, "ASSENT_METRICS_ADDR or --metrics-addr"}
}

// workerPort is the worker's probes' and metrics' address.
func workerPort(cfg *config.Config) port {
	return port{cfg.WorkerHTTPAddr, "ASSENT_WORKER_HTTP_ADDR or --worker-http-addr"}
}

// listenPort opens p's listener, or says which setting moves it.
func listenPort(p port) (net.Listener, error) {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return nil, cannotListen(p.addr, p.setting, err)
	}
	return l, nil
}

// listenMetrics opens the listener of metrics alone when
// ASSENT_METRICS_ADDR is set; nil otherwise, the metrics being served
// with the process's other routes.
func listenMetrics(cfg *config.Config) (net.Listener, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	return listenPort(metricsPort(cfg))
}

// metricsOnAPI says whether the API's listener serves /metrics: never
// when ASSENT_METRICS_ADDR gives them a listener of their own; on serve's,
// which the public reaches, only behind ASSENT_METRICS_TOKEN, since they
// count every organisation's requests; on dev's (loopback unless moved)
// always.
func metricsOnAPI(cfg *config.Config, dev bool) bool {
	return cfg.MetricsAddr == "" && (dev || cfg.MetricsToken != "")
}

// serveMetrics serves m at /metrics alone on l (when not nil) until ctx
// ends, behind ASSENT_METRICS_TOKEN when set.
func serveMetrics(ctx context.Context, g *errgroup.Group, l net.Listener, m *metrics.Metrics, token string, log *slog.Logger) {
	if l == nil {
		return
	}
	log.Info("serving metrics", "address", l.Addr().String(), "token", token != "")
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, m.Handler(token))
	g.Go(func() error { return serveHTTP(ctx, l, mux, log) })
}

// readDatabase has m's instance-wide gauges read from store: run by the
// processes that run the worker (worker, dev), one reading per interval.
func readDatabase(m *metrics.Metrics, store *models.Store) {
	m.ReadDatabase(readingsEvery, store.Readings)
}
