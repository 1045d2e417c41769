package web_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestFormsRefuseWhatNoColumnHolds: a NUL character or bytes that are not
// UTF-8 in a form field, a query or a path parameter are answered 400
// naming the field, on both databases, never 500.
func TestFormsRefuseWhatNoColumnHolds(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		csrf := b.get("/signin").csrf(t)
		for _, email := range []string{"ada@example.com\x00", "ada\xff@example.com"} {
			r := b.post("/signin", url.Values{"csrf": {csrf}, "email": {email}})
			assert.Equal(t, http.StatusBadRequest, r.status, r.body)
			assert.Contains(t, r.body, `"email"`)
		}
		csrf = b.signIn(s, "ada@example.com")
		r := b.post("/approvals/apr_x%00/decision", url.Values{"csrf": {csrf}, "decision": {"approve"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Contains(t, r.body, `"id"`)
		r = b.get("/history?cursor=%00")
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Contains(t, r.body, `"cursor"`)
	})
}
