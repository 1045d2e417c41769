package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/server/common/log/tag"
)

// A stopping server's warnings are expected and not shown; its errors are.
func TestServerLoggerQuietsWarningsWhileStopping(t *testing.T) {
	var out bytes.Buffer
	log := Server(New(&out, slog.LevelInfo), slog.LevelWarn)
	log.Started()
	log.Info("chatty")
	log.Warn("before stop")
	log.Stopping()
	log.Warn("connection lost")
	log.Error("disk full")
	log.Error("service failures", tag.NewStringTag("grpc_code", "Unavailable"))
	log.Error(trailerOfACutCall, tag.NewStringTag("error", "SendHeader called multiple times"))
	assert.NotContains(t, out.String(), "chatty")
	assert.Contains(t, out.String(), "before stop")
	assert.NotContains(t, out.String(), "connection lost")
	assert.Contains(t, out.String(), "disk full")
	assert.NotContains(t, out.String(), "service failures", "a service the stop made unavailable")
	assert.NotContains(t, out.String(), "SendHeader", "a call the stop cut off")
}

// A starting server's own services find its frontend not healthy yet and
// retry: those records are not shown; once it has started, they are.
func TestServerLoggerQuietsTheFrontendStarting(t *testing.T) {
	var out bytes.Buffer
	log := Server(New(&out, slog.LevelInfo), slog.LevelWarn)
	notHealthy := tag.NewStringTag("error", "failed reaching server: Frontend is not healthy yet")
	log.Error("service failures", tag.NewStringTag("grpc_code", "Unavailable"))
	log.Warn(systemClientRetry, notHealthy)
	log.Warn("config ignored")
	log.Error("disk full")
	assert.NotContains(t, out.String(), "service failures")
	assert.NotContains(t, out.String(), "not healthy yet")
	assert.Contains(t, out.String(), "config ignored")
	assert.Contains(t, out.String(), "disk full")

	log.Started()
	log.Error("service failures", tag.NewStringTag("grpc_code", "Unavailable"))
	log.Warn(systemClientRetry, notHealthy)
	assert.Contains(t, out.String(), "service failures")
	assert.Contains(t, out.String(), "not healthy yet")
}

// A record logged with a context inside a span names the span; one
// without carries neither field.
func TestRecordsCarryTheirSpan(t *testing.T) {
	var out bytes.Buffer
	log := New(&out, slog.LevelInfo).With("component", "test")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled})
	log.InfoContext(trace.ContextWithSpanContext(context.Background(), sc), "inside")
	log.InfoContext(context.Background(), "outside")
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	var inside, outside map[string]any
	require.NoError(t, json.Unmarshal(lines[0], &inside))
	require.NoError(t, json.Unmarshal(lines[1], &outside))
	assert.Equal(t, sc.TraceID().String(), inside["trace_id"])
	assert.Equal(t, sc.SpanID().String(), inside["span_id"])
	assert.Equal(t, "test", inside["component"])
	assert.NotContains(t, outside, "trace_id")
	assert.NotContains(t, outside, "span_id")
}
