package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/devtemporal"
)

// runTemporal runs only the embedded Temporal server and its UI, so the
// production shape (serve + worker) can run on one machine without Docker.
func runTemporal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, log, err := parse("temporal", args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	srv, err := devtemporal.Start(ctx, embeddedTemporal(cfg, log))
	if err != nil {
		return err
	}
	defer srv.Stop()
	fmt.Fprintf(stdout, "Temporal frontend %s (namespace %s)\nTemporal UI       http://%s\n",
		srv.FrontendAddress(), cfg.TemporalNamespace, srv.UIAddress())
	<-ctx.Done()
	return nil
}

// embeddedTemporal is how dev and temporal run the embedded server: state
// in the data dir, ports from the configuration.
func embeddedTemporal(cfg *config.Config, log *slog.Logger) devtemporal.Options {
	return devtemporal.Options{
		FrontendPort: cfg.TemporalPort,
		UIPort:       cfg.TemporalUIPort,
		DatabaseFile: filepath.Join(cfg.DataDir, "temporal.db"),
		Namespace:    cfg.TemporalNamespace,
		Logger:       log,
	}
}
