package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestWithoutTemporalCreatesAnswer503: a process without a workflow
// service refuses a valid create with 503 (never 500) and writes nothing;
// an invalid one still hears what is wrong with it.
func TestWithoutTemporalCreatesAnswer503(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		for _, c := range []struct{ path, body string }{
			{"/api/v1/approvals", `{"title":"Pay Initech","approvers":["ada@example.com"]}`},
			{"/api/v1/collections", `{"title":"Budget","respondents":["ada@example.com"],"questions":[{"prompt":"How much?","kind":"number"}]}`},
		} {
			r := f.do(t, http.MethodPost, c.path, f.agentKey, c.body, nil)
			assert.Equal(t, http.StatusServiceUnavailable, r.status, "%s: %s", c.path, r.body)
			assert.Equal(t, "service_unavailable", errField(r, "code"), c.path)

			list := f.do(t, http.MethodGet, c.path, f.agentKey, "", nil)
			assert.Equal(t, http.StatusOK, list.status)
			assert.Empty(t, list.decoded["data"], "%s: nothing was written", c.path)

			bad := f.do(t, http.MethodPost, c.path, f.agentKey, `{"title":""}`, nil)
			assert.Equal(t, http.StatusBadRequest, bad.status, "%s: %s", c.path, bad.body)
		}
	})
}
