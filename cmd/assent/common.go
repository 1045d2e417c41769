package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/logging"
	"github.com/assent-hq/assent/models"
)

// parse reads a subcommand's flags on top of the environment.
func parse(name string, args []string, stderr io.Writer) (*config.Config, *slog.Logger, error) {
	fs := flag.NewFlagSet("assent "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config.Config
	cfg.Register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	// Only the production processes refuse them; dev and tools may see them.
	if err := cfg.CheckDevSettings(name != "serve" && name != "worker"); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckOIDC(); err != nil {
		return nil, nil, err
	}
	if err := cfg.CheckTrustedProxies(); err != nil {
		return nil, nil, err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, nil, fmt.Errorf("log level: %w", err)
	}
	return &cfg, logging.New(stderr, level), nil
}

func openDB(cfg *config.Config, log *slog.Logger) (*gorm.DB, error) {
	url := cfg.Database()
	db, err := models.Open(url)
	if err != nil {
		return nil, err
	}
	log.Info("database opened", "driver", db.Dialector.Name())
	return db, nil
}

func dialTemporal(ctx context.Context, cfg *config.Config, log *slog.Logger) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  cfg.TemporalAddress,
		Namespace: cfg.TemporalNamespace,
		Logger:    logging.SDK(log.With("component", "temporal-sdk")),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", cfg.TemporalAddress, err)
	}
	return c, nil
}

// listen opens the HTTP listener and derives the base URL from the bound
// address when none is configured, so port 0 works.
func listen(cfg *config.Config) (net.Listener, string, error) {
	l, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, "", err
	}
	base := cfg.PublicBaseURL()
	if base == "" {
		base = "http://" + l.Addr().String()
	}
	return l, base, nil
}

// serveHTTP serves h on l until ctx ends, then drains for up to 10 s.
func serveHTTP(ctx context.Context, l net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down http server")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// purgeHourly runs purge at start and then hourly while ctx lives,
// logging what it removed; what names the rows for the log.
func purgeHourly(ctx context.Context, log *slog.Logger, what string, purge func(context.Context) (int64, error)) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := purge(ctx); err != nil && ctx.Err() == nil {
			log.Warn("purge "+what, "error", err)
		} else if n > 0 {
			log.Info("purged "+what, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
