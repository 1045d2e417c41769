package otelsetup_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/assent-hq/assent/internal/tracing"
	"github.com/assent-hq/assent/internal/tracing/otelsetup"
)

var quiet = slog.New(slog.DiscardHandler)

// otelEnv are the variables Start reads, cleared so the machine's own
// do not leak in.
var otelEnv = []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"}

func cleanEnv(t *testing.T, set map[string]string) {
	for _, k := range otelEnv {
		t.Setenv(k, set[k])
	}
}

// Without an exporter named, nothing is on: no provider, no hook.
func TestOffUnlessAnExporterIsConfigured(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"},
		{"OTEL_SERVICE_NAME": "named"},
	} {
		cleanEnv(t, env)
		shutdown, err := otelsetup.Start(context.Background(), "assent-test", quiet)
		require.NoError(t, err, "%v", env)
		assert.False(t, tracing.Enabled(), "%v", env)
		assert.NoError(t, shutdown(context.Background()))
		_, span := otel.Tracer("t").Start(context.Background(), "x")
		assert.False(t, span.IsRecording(), "the global provider stays a no-op: %v", env)
	}
}

func TestStartRefusesWhatItCannotExport(t *testing.T) {
	for env, want := range map[string]string{
		"OTEL_TRACES_EXPORTER=zipkin":             "OTLP only",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json":   "http/protobuf or grpc",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=smtp": "http/protobuf or grpc",
	} {
		k, v, _ := strings.Cut(env, "=")
		cleanEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", k: v})
		_, err := otelsetup.Start(context.Background(), "assent-test", quiet)
		require.Error(t, err, env)
		assert.Contains(t, err.Error(), want)
		assert.False(t, tracing.Enabled())
	}
}

// collector is an OTLP/HTTP receiver keeping what it is sent.
type collector struct {
	mu  sync.Mutex
	got []*collectortrace.ExportTraceServiceRequest
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not a trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.got = append(c.got, &req)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}

// serviceNames are the service.name of each batch received.
func (c *collector) serviceNames() (names []string, spans []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, req := range c.got {
		for _, rs := range req.ResourceSpans {
			for _, a := range rs.Resource.Attributes {
				if a.Key == "service.name" {
					names = append(names, a.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans = append(spans, s.Name)
				}
			}
		}
	}
	return names, spans
}

// An OTLP endpoint turns tracing on; the spans reach it over HTTP by
// default, named for the process unless OTEL_SERVICE_NAME names it, and
// shutdown flushes them.
func TestStartExportsOverOTLPAndFlushesOnShutdown(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		service string
	}{
		{map[string]string{}, "assent-test"},
		{map[string]string{"OTEL_SERVICE_NAME": "assent-eu-1"}, "assent-eu-1"},
	} {
		c := &collector{}
		srv := httptest.NewServer(c)
		tc.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = srv.URL
		cleanEnv(t, tc.env)
		shutdown, err := otelsetup.Start(context.Background(), "assent-test", quiet)
		require.NoError(t, err)
		require.True(t, tracing.Enabled())
		_, span := otel.Tracer("t").Start(context.Background(), "work")
		span.End()
		require.NoError(t, shutdown(context.Background()))
		assert.False(t, tracing.Enabled(), "shutdown turns the hooks off")
		names, spans := c.serviceNames()
		assert.Equal(t, []string{tc.service}, names)
		assert.Equal(t, []string{"work"}, spans)
		srv.Close()
	}
}

// grpc is taken as the protocol; the exporter connects lazily, so Start
// succeeds without a collector.
func TestStartTakesGRPC(t *testing.T) {
	cleanEnv(t, map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"})
	shutdown, err := otelsetup.Start(context.Background(), "assent-test", quiet)
	require.NoError(t, err)
	assert.True(t, tracing.Enabled())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = shutdown(ctx)
	assert.False(t, tracing.Enabled())
}
