package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

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
	if err := checkPorts(temporalPorts(cfg)...); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	srv, err := startTemporal(ctx, embeddedTemporal(cfg, log, false))
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
// in the data dir, ports from the configuration. The UI only reads unless
// the operator turns its write actions on, or, in dev (writes says so),
// unless the developer turns them off: dev runs on the developer's own
// machine, whose frontend already takes a terminate from any local client.
func embeddedTemporal(cfg *config.Config, log *slog.Logger, writes bool) devtemporal.Options {
	return devtemporal.Options{
		FrontendPort:   cfg.TemporalPort,
		UIPort:         cfg.TemporalUIPort,
		DatabaseFile:   filepath.Join(cfg.DataDir, "temporal.db"),
		Namespace:      cfg.TemporalNamespace,
		Logger:         log,
		UIWriteActions: cfg.UIWriteActions(writes),
	}
}

// temporalPorts are the embedded server's fixed ports (its frontend and
// UI, on devtemporal's address), for checkPorts.
func temporalPorts(cfg *config.Config) []port {
	at := func(p int) string { return net.JoinHostPort(devtemporal.DefaultIP, strconv.Itoa(p)) }
	ports := []port{{at(cfg.TemporalPort), "ASSENT_TEMPORAL_PORT or --temporal-port"}}
	if cfg.TemporalUIPort >= 0 {
		ports = append(ports, port{at(cfg.TemporalUIPort), "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port"})
	}
	return ports
}

// startTemporal starts the embedded server; a port it cannot bind is
// reported with the setting that moves it.
func startTemporal(ctx context.Context, o devtemporal.Options) (*devtemporal.Server, error) {
	srv, err := devtemporal.Start(ctx, o)
	if pe, ok := errors.AsType[*devtemporal.PortError](err); ok {
		setting := "ASSENT_TEMPORAL_PORT or --temporal-port"
		if pe.Port == devtemporal.UIPort {
			setting = "ASSENT_TEMPORAL_UI_PORT or --temporal-ui-port"
		}
		return nil, cannotListen(pe.Addr, setting, pe.Err)
	}
	return srv, err
}
