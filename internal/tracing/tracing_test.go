package tracing_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/assent-hq/assent/internal/tracing"
)

// record turns tracing on with a recorder until t ends.
func record(t *testing.T) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	return rec
}

func TestTraceparentRoundTrip(t *testing.T) {
	ctx, span := otel.Tracer("t").Start(context.Background(), "off")
	assert.Empty(t, tracing.Traceparent(ctx), "off: nothing leaves the process")
	span.End()

	record(t)
	ctx, span = otel.Tracer("t").Start(context.Background(), "event")
	defer span.End()
	tp := tracing.Traceparent(ctx)
	require.Len(t, tp, 55)
	back := trace.SpanContextFromContext(tracing.WithTraceparent(context.Background(), tp))
	assert.Equal(t, span.SpanContext().TraceID(), back.TraceID())
	assert.Equal(t, span.SpanContext().SpanID(), back.SpanID())
	assert.True(t, back.IsRemote())
	assert.Empty(t, tracing.Traceparent(context.Background()))
	assert.Equal(t, context.Background(), tracing.WithTraceparent(context.Background(), ""))
}

func TestGinContinuesTheCallersTraceUnderTheRoute(t *testing.T) {
	rec := record(t)
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.Use(tracing.Gin())
	var inside trace.SpanContext
	e.GET("/links/:token", func(c *gin.Context) {
		inside = trace.SpanContextFromContext(c.Request.Context())
		c.Status(http.StatusTeapot)
	})
	req := httptest.NewRequest("GET", "/links/s3cret?x=1", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	e.ServeHTTP(httptest.NewRecorder(), req)

	spans := rec.Ended()
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, "GET /links/:token", s.Name())
	assert.Equal(t, trace.SpanKindServer, s.SpanKind())
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", s.SpanContext().TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", s.Parent().SpanID().String())
	assert.Equal(t, s.SpanContext(), inside, "the handler's context carries the span")
	attrs := attribute.NewSet(s.Attributes()...)
	status, _ := attrs.Value("http.response.status_code")
	assert.Equal(t, int64(http.StatusTeapot), status.AsInt64())
	for _, a := range s.Attributes() {
		assert.NotContains(t, a.Value.String(), "s3cret", "%s: a path's secret is never recorded", a.Key)
	}
}

// The client span names the host, never the URL, and the request carries
// its traceparent; outside a trace nothing is added.
func TestTransportSendsTraceparent(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	client := &http.Client{Transport: tracing.Transport(http.DefaultTransport)}
	send := func(ctx context.Context) {
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL+"/services/T0/B0/s3cret", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Empty(t, req.Header.Get("traceparent"), "the caller's request is left as it was")
	}
	send(context.Background())

	rec := record(t)
	send(context.Background())
	ctx, parent := otel.Tracer("t").Start(context.Background(), "deliver")
	send(ctx)
	parent.End()

	require.Len(t, got, 3)
	assert.Empty(t, got[0], "tracing off")
	assert.Empty(t, got[1], "outside a trace")
	var client0 sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			client0 = s
		}
	}
	require.NotNil(t, client0)
	assert.Equal(t, "POST", client0.Name())
	assert.Equal(t, parent.SpanContext().SpanID(), client0.Parent().SpanID())
	assert.Equal(t, "00-"+client0.SpanContext().TraceID().String()+"-"+client0.SpanContext().SpanID().String()+"-01", got[2])
	assert.Equal(t, codes.Error, client0.Status().Code)
	for _, a := range client0.Attributes() {
		assert.NotContains(t, a.Value.String(), "s3cret", "%s: the URL is never recorded", a.Key)
	}
}

func TestGORMStatementsJoinTheTrace(t *testing.T) {
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "t.db")), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	require.NoError(t, db.Use(tracing.GORM()))
	type Thing struct {
		ID   int
		Name string
	}
	require.NoError(t, db.AutoMigrate(&Thing{}))
	rec := record(t)
	require.NoError(t, db.Create(&Thing{ID: 1, Name: "secret value"}).Error, "outside a trace")
	assert.Empty(t, rec.Ended())

	ctx, parent := otel.Tracer("t").Start(context.Background(), "request")
	tx := db.WithContext(ctx)
	require.NoError(t, tx.Create(&Thing{ID: 2, Name: "secret value"}).Error)
	var th Thing
	require.ErrorIs(t, tx.Where("id = ?", 9).Take(&th).Error, gorm.ErrRecordNotFound)
	require.Error(t, tx.Exec("INSERT INTO nowhere VALUES (1)").Error)
	parent.End()

	var names []string
	for _, s := range rec.Ended() {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		names = append(names, s.Name())
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID())
		attrs := attribute.NewSet(s.Attributes()...)
		text, _ := attrs.Value("db.query.text")
		assert.NotContains(t, text.AsString(), "secret value", "values stay out")
		system, _ := attrs.Value("db.system.name")
		assert.Equal(t, "sqlite", system.AsString())
	}
	assert.Equal(t, []string{"INSERT things", "SELECT things", "INSERT"}, names)
	spans := rec.Ended()
	assert.Equal(t, codes.Unset, spans[1].Status().Code, "not found is an answer, not a failure")
	assert.Equal(t, codes.Error, spans[2].Status().Code)
}

func TestCallSpansOnlyInsideATrace(t *testing.T) {
	rec := record(t)
	_, end := tracing.Call(context.Background(), "SMTP send", "smtp.example.com", 587)
	end(nil)
	assert.Empty(t, rec.Ended())
	ctx, parent := otel.Tracer("t").Start(context.Background(), "sign-in")
	_, end = tracing.Call(ctx, "SMTP send", "smtp.example.com", 587)
	end(errors.New("mail: connect to SMTP server"))
	parent.End()
	s := rec.Ended()[0]
	assert.Equal(t, "SMTP send", s.Name())
	assert.Equal(t, codes.Error, s.Status().Code)
}
