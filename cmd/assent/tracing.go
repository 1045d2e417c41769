package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/assent-hq/assent/internal/tracing"
	"github.com/assent-hq/assent/internal/tracing/otelsetup"
)

// flushTimeout bounds sending the spans still buffered at exit.
const flushTimeout = 5 * time.Second

// startTracing turns tracing on when the OTEL_* environment configures an
// exporter, naming the process assent-<command> unless OTEL_SERVICE_NAME
// names it; the function returned flushes at exit.
func startTracing(ctx context.Context, command string, log *slog.Logger) (stop func(), err error) {
	shutdown, err := otelsetup.Start(ctx, "assent-"+command, log)
	if err != nil {
		return nil, err
	}
	if tracing.Enabled() {
		log.Info("tracing: spans are exported over OTLP as the OTEL_* environment says")
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn("tracing: spans not flushed", "error", err)
		}
	}, nil
}

// keepTracingFromEmbeddedTemporal stops the embedded Temporal server of
// `assent dev` from reading OTEL_TRACES_EXPORTER too: it would export its
// own spans over gRPC, and refuse to start when the protocol is
// http/protobuf. startTracing has already read it.
func keepTracingFromEmbeddedTemporal() { _ = os.Unsetenv("OTEL_TRACES_EXPORTER") }
