// Package tracing holds Assent's OpenTelemetry hooks: one trace per
// request across the API, the database, deliveries and email
// (docs/tracing.md). Tracing is off until Install (otelsetup.Start, when
// the OTEL_* environment names an exporter); every hook checks Enabled
// first, so a process without an exporter pays for no more than that
// check. The SDK, its exporters and Temporal's interceptor are in
// otelsetup, so the packages with hooks do not link them.
package tracing

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// scope names Assent's own spans' instrumentation.
const scope = "github.com/assent-hq/assent"

var enabled atomic.Bool

// Enabled reports whether spans are recorded and exported.
func Enabled() bool { return enabled.Load() }

// propagator is W3C Trace Context alone: an agent's baggage is not
// passed on to the receivers of its requests.
var propagator = propagation.TraceContext{}

// Propagator is the one propagator, for what carries a trace elsewhere
// (Temporal's headers).
func Propagator() propagation.TextMapPropagator { return propagator }

func tracer() trace.Tracer { return otel.Tracer(scope) }

// Install makes tp the process's tracer provider and turns every hook on;
// the returned function turns them off again. otelsetup.Start uses it,
// and tests with a recorder.
func Install(tp trace.TracerProvider) (restore func()) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagator)
	enabled.Store(true)
	return func() {
		enabled.Store(false)
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	}
}

// Traceparent is the W3C traceparent of the span ctx carries, "" when
// it carries none; for what is carried out of the process's contexts,
// such as an outbox event.
func Traceparent(ctx context.Context) string {
	if !Enabled() || !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c["traceparent"]
}

// WithTraceparent is ctx continuing the trace of traceparent, as
// Traceparent gave it; ctx itself when there is none or tracing is off.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" || !Enabled() {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// Call starts a client span named name for a call to host:port, in ctx's
// trace when there is one to join: work outside any request (a poll, a
// purge) makes no trace of its own. end ends it, failed when err is not
// nil.
func Call(ctx context.Context, name, host string, port int) (_ context.Context, end func(err error)) {
	if !Enabled() || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, func(error) {}
	}
	ctx, span := tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.ServerAddress(host), semconv.ServerPort(port)))
	return ctx, func(err error) {
		fail(span, err)
		span.End()
	}
}

// fail marks span failed with err; nil changes nothing.
func fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
