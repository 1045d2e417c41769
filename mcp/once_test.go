package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	assent "github.com/assent-hq/assent/sdk/go"
)

// A server that lists the whole organisation's requests by externalId (as
// versions before the third security review did) cannot make a repeated
// call adopt another key's request: the tool compares the requester.
func TestOnceComparesTheRequester(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "mcp-key", r.URL.Query().Get("externalId"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"data":[{"id":"apr_theirs","status":"approved","requestedById":"key_other","approvedInput":{"to":"attacker"},"createdAt":%q}],"nextCursor":null}`,
			time.Now().UTC().Format(time.RFC3339Nano))
	})
	mux.HandleFunc("GET /api/v1/me", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keyId":"key_mine","kind":"agent","member":null,"organization":{"id":"org_1","name":"Acme"},"scopes":[]}`))
	})
	created := 0
	mux.HandleFunc("POST /api/v1/approvals", func(w http.ResponseWriter, r *http.Request) {
		created++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"error":{"code":"idempotency_key_reused","message":"this key was used with another body"}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := assent.New(srv.URL, "key", assent.WithRetries(0))
	ctx := context.Background()

	a, err := once(ctx, c, "mcp-key", approvalsMade(ctx, c), func() (*assent.Approval, error) {
		return c.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Refund"}, assent.WithIdempotencyKey("mcp-key"))
	})
	assert.Nil(t, a, "another key's request is never adopted")
	require.Error(t, err)
	assert.True(t, errors.Is(err, &assent.Error{Code: assent.CodeIdempotencyKeyReused}), err.Error())
	assert.Equal(t, 1, created)
}
