package api_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/tracing"
)

// TestOneTraceFromAgentToReceiver: an agent that sends a traceparent
// with its create and with the decision it relays finds one trace
// holding the API's spans, the workflow's start and run, its activities,
// the database's statements and the callback's request, and the receiver
// is sent a traceparent of that trace, though the callback left through
// the outbox.
func TestOneTraceFromAgentToReceiver(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		var mu sync.Mutex
		var sent []string
		cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			sent = append(sent, r.Header.Get("traceparent"))
			mu.Unlock()
		}))
		t.Cleanup(cb.Close)

		// The agent's own span of each call, in one trace of its own.
		traceID, createdIn, decidedIn := randomHex(t, 16), randomHex(t, 8), randomHex(t, 8)
		agent := func(span string) map[string]string {
			return map[string]string{"traceparent": "00-" + traceID + "-" + span + "-01"}
		}
		r := s.do(t, "POST", "/api/v1/approvals", s.agentKey,
			fmt.Sprintf(`{"title":"Refund","approvers":["cy@example.com"],"callbackUrl":%q}`, cb.URL+"/cb"), agent(createdIn))
		require.Equal(t, 201, r.status, string(r.body))
		d := s.do(t, "POST", "/api/v1/approvals/"+r.decoded["id"].(string)+"/decision", s.cyToken, `{"decision":"approve"}`, agent(decidedIn))
		require.Equal(t, 200, d.status, string(d.body))

		waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(sent) == 1 })
		parts := strings.Split(sent[0], "-")
		require.Len(t, parts, 4, "the callback carries a traceparent: %q", sent[0])
		assert.Equal(t, traceID, parts[1], "the receiver continues the agent's trace")

		var names []string
		statement, client := false, false
		for _, sp := range rec.Started() {
			if sp.SpanContext().TraceID().String() != traceID {
				continue
			}
			names = append(names, sp.Name())
			switch sp.Name() {
			case "POST /api/v1/approvals":
				assert.Equal(t, createdIn, sp.Parent().SpanID().String(), "the create continues the agent's span")
			case "POST /api/v1/approvals/:id/decision":
				assert.Equal(t, decidedIn, sp.Parent().SpanID().String(), "the decision continues the agent's span")
			}
			attrs := attribute.NewSet(sp.Attributes()...)
			if _, ok := attrs.Value("db.query.text"); ok && sp.SpanKind() == trace.SpanKindClient {
				statement = true
			}
			if addr, ok := attrs.Value("server.address"); ok && sp.SpanKind() == trace.SpanKindClient && sp.Name() == "POST" &&
				strings.Contains(cb.URL, addr.AsString()) {
				client = true
			}
		}
		for _, want := range []string{
			"POST /api/v1/approvals", "POST /api/v1/approvals/:id/decision",
			"StartWorkflow:Approval", "RunWorkflow:Approval", "UpdateWorkflow:decide", "HandleUpdate:decide",
			"RunActivity:PersistApproval", "StartWorkflow:Delivery", "RunWorkflow:Delivery", "RunActivity:Deliver",
		} {
			assert.Contains(t, names, want)
		}
		assert.True(t, statement, "a database statement's span is in the trace: %v", names)
		assert.True(t, client, "the callback's request is in the trace: %v", names)
	})
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
