package api_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestErrorWording: a blank id leaves no double space, and an admin key
// on a request route is told to use an agent key.
func TestErrorWording(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	for _, path := range []string{"/api/v1/approvals/%20", "/api/v1/reviews/%20", "/api/v1/collections/%20", "/api/v1/flows/%20"} {
		r := f.do(t, "GET", path, f.agentKey, "", nil)
		require.Equal(t, 404, r.status, "%s: %s", path, r.body)
		msg := errField(r, "message")
		assert.NotContains(t, msg, "  ", path)
		assert.Regexp(t, `^\S.* not found$`, msg, path)
	}

	r := f.do(t, "POST", "/api/v1/approvals", f.adminKey, `{"title":"Refund","approvers":["everyone"]}`, nil)
	require.Equal(t, 403, r.status, string(r.body))
	assert.Equal(t, "insufficient_scope", errField(r, "code"))
	assert.Contains(t, errField(r, "message"), "use an agent key with the scope approvals:write")
	r = f.do(t, "POST", "/api/v1/approvals", f.readOnlyKey, `{"title":"Refund","approvers":["everyone"]}`, nil)
	assert.Equal(t, "this key lacks the scope approvals:write", errField(r, "message"), "an agent key is told the scope it lacks")
}
