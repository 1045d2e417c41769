// Package otelsetup turns tracing on for a process: OpenTelemetry's SDK
// with the OTLP exporter the OTEL_* environment names (Start), and
// Temporal's tracing interceptor for its clients and workers
// (TemporalClient). The hooks themselves are internal/tracing, apart so
// that the packages using them link neither gRPC nor the Temporal SDK.
package otelsetup

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/assent-hq/assent/internal/tracing"
)

// Start starts tracing for the process when the environment configures
// an exporter: OTEL_TRACES_EXPORTER=otlp, or an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), over
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc).
// service is the service name unless OTEL_SERVICE_NAME says otherwise;
// exports that fail are logged to log. The returned shutdown flushes what
// is buffered; when nothing was configured it does nothing and every
// hook stays off.
func Start(ctx context.Context, service string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	exp, err := exporter(ctx)
	if err != nil || exp == nil {
		return func(context.Context) error { return nil }, err
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "error", err) }))
	res, err := resource(ctx, service)
	if err != nil {
		// Only part of it: a malformed OTEL_RESOURCE_ATTRIBUTES, say.
		log.Warn("tracing: resource", "error", err)
	}
	// The sampler follows OTEL_TRACES_SAMPLER, else the caller's decision
	// and every trace Assent starts.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	restore := tracing.Install(tp)
	return func(ctx context.Context) error {
		restore()
		return tp.Shutdown(ctx)
	}, nil
}

// resource describes the process: service.name is service unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES, read after, say
// otherwise.
func resource(ctx context.Context, service string) (*sdkresource.Resource, error) {
	res, err := sdkresource.New(ctx, sdkresource.WithAttributes(semconv.ServiceName(service)),
		sdkresource.WithTelemetrySDK(), sdkresource.WithHost(), sdkresource.WithFromEnv())
	if res == nil {
		res = sdkresource.NewSchemaless(semconv.ServiceName(service))
	}
	return res, err
}

// exporter is the span exporter the environment names, nil for none.
func exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	switch kind := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))); kind {
	case "none":
		return nil, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: Assent exports traces over OTLP only (otlp, or none)", kind)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	// Each exporter reads the endpoint, headers, TLS and timeout from the
	// environment itself.
	switch strings.ToLower(strings.TrimSpace(protocol)) {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: use http/protobuf or grpc", protocol)
}

// temporalInterceptor is Temporal's tracing interceptor on the global
// provider: it carries the trace in each start's, Update's and
// activity's header, with spans named "StartWorkflow:Approval",
// "RunWorkflow:Approval", "UpdateWorkflow:decide", "RunActivity:Deliver"…
var temporalInterceptor = sync.OnceValue(func() interceptor.Interceptor {
	i, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		TextMapPropagator: tracing.Propagator(), DisableBaggage: true})
	if err != nil {
		panic(err) // it fails only on options we do not set
	}
	return i
})

// TemporalClient is o with the tracing interceptor first when tracing is
// on. Workers made from the client take it too (client.Options'
// Interceptors), so an activity's context carries its workflow's trace.
func TemporalClient(o client.Options) client.Options {
	if !tracing.Enabled() {
		return o
	}
	o.Interceptors = append([]interceptor.ClientInterceptor{temporalInterceptor()}, o.Interceptors...)
	return o
}
