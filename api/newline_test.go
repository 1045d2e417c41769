package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestJSONEndsWithNewline: every JSON answer, errors and replays included,
// ends with a newline, and a replayed 201 carries the first Location.
func TestJSONEndsWithNewline(t *testing.T) {
	t.Parallel()
	s := newStack(t, testenv.OpenDB(t, "sqlite"))
	body := `{"title":"Refund","approvers":["Finance"]}`
	key := map[string]string{"Idempotency-Key": "nl-1"}
	first := s.do(t, "POST", "/api/v1/approvals", s.agentKey, body, key)
	require.Equal(t, 201, first.status, string(first.body))
	replay := s.do(t, "POST", "/api/v1/approvals", s.agentKey, body, key)
	require.Equal(t, 201, replay.status, string(replay.body))
	assert.Equal(t, "true", replay.header.Get("Idempotency-Replayed"))
	assert.Equal(t, "/api/v1/approvals/"+first.decoded["id"].(string), first.header.Get("Location"))
	assert.Equal(t, first.header.Get("Location"), replay.header.Get("Location"), "a replay carries the first Location")
	assert.Equal(t, first.body, replay.body, "a replay is the first answer byte for byte")

	for name, r := range map[string]response{
		"created":   first,
		"replayed":  replay,
		"read":      s.do(t, "GET", "/api/v1/approvals", s.agentKey, "", nil),
		"refused":   s.do(t, "POST", "/api/v1/approvals", s.agentKey, `{"title":""}`, nil),
		"no route":  s.do(t, "GET", "/api/v1/nowhere", s.agentKey, "", nil),
		"anonymous": s.do(t, "GET", "/api/v1/approvals", "", "", nil),
		"document":  s.do(t, "GET", "/api/v1/openapi.json", "", "", nil),
	} {
		require.NotEmpty(t, r.body, name)
		assert.Contains(t, r.header.Get("Content-Type"), "application/json", name)
		assert.Equal(t, byte('\n'), r.body[len(r.body)-1], "%s: %s", name, r.body)
		assert.NotEqual(t, byte('\n'), r.body[len(r.body)-2], "%s: one newline", name)
	}
}
