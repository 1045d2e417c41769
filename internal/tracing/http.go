package tracing

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// serverSpanKey marks a request whose server span Gin already started.
type serverSpanKey struct{}

// Gin starts a server span per request, continuing the caller's trace
// when it sent a traceparent, named by the route as registered ("POST
// /api/v1/approvals/:id/decision"). Paths and queries are not recorded:
// some carry a secret (an emailed decision link's token).
func Gin() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !Enabled() {
			c.Next()
			return
		}
		name := c.Request.Method
		if route := c.FullPath(); route != "" {
			name += " " + route
		}
		ctx := c.Request.Context()
		// A request routed again (the API's unencoded slugs) keeps its
		// span under the route that serves it.
		if span, ok := ctx.Value(serverSpanKey{}).(trace.Span); ok {
			span.SetName(name)
			span.SetAttributes(semconv.HTTPRoute(c.FullPath()))
			c.Next()
			return
		}
		var end func(int)
		c.Request, end = Server(c.Request, c.FullPath())
		c.Next()
		end(c.Writer.Status())
	}
}

// Server starts the server span of r, answered by route (a template such
// as "/api/v1/approvals/:id", "" for none), continuing the caller's trace
// when it sent a traceparent; end records the status answered and ends
// it. Outside tracing it returns r and does nothing.
func Server(r *http.Request, route string) (_ *http.Request, end func(status int)) {
	if !Enabled() {
		return r, func(int) {}
	}
	name := r.Method
	if route != "" {
		name += " " + route
	}
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(semconv.HTTPRequestMethodKey.String(r.Method), semconv.HTTPRoute(route)))
	return r.WithContext(context.WithValue(ctx, serverSpanKey{}, span)), func(status int) {
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
	}
}

// Transport wraps base with a client span per request, whose
// traceparent the request carries, so a receiver can continue the trace.
// The span names the receiver's host, never its URL: a Slack or Teams
// webhook's path is its credential.
func Transport(base http.RoundTripper) http.RoundTripper { return transport{base} }

type transport struct{ base http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !Enabled() || !trace.SpanFromContext(ctx).IsRecording() {
		return t.base.RoundTrip(req)
	}
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(req.Method), semconv.ServerAddress(req.URL.Hostname())}
	if p, err := strconv.Atoi(req.URL.Port()); err == nil {
		attrs = append(attrs, semconv.ServerPort(p))
	} else if req.URL.Scheme == "https" {
		attrs = append(attrs, semconv.ServerPort(443))
	}
	ctx, span := tracer().Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	// A RoundTripper must not change the request it was given.
	req = req.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		// Not err's text: it may name the URL.
		span.SetStatus(codes.Error, "no response")
		return resp, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, http.StatusText(resp.StatusCode))
	}
	return resp, nil
}

// CloseIdleConnections passes http.Client's call on to base.
func (t transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
