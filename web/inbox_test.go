package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestInboxSaysItsOrder: the inbox lists what needs attention first (the
// highest risk, then the soonest expiry) and says so, or the newest first
// when asked; an order it does not know is refused, naming it.
func TestInboxSaysItsOrder(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		now := time.Now()
		soonLow := s.approval(t, "Soon but low", models.RiskLow, now.Add(time.Hour), s.ada.ID)
		lateCritical := s.approval(t, "Late but critical", models.RiskCritical, now.Add(20*time.Hour), s.ada.ID)
		high := s.approval(t, "High, newest", models.RiskHigh, now.Add(5*time.Hour), s.ada.ID)
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		order := func(body string, as ...*models.Approval) []int {
			out := make([]int, len(as))
			for i, a := range as {
				out[i] = strings.Index(body, `href="/approvals/`+a.ID+`"`)
				require.Positive(t, out[i], a.Title)
			}
			return out
		}

		page := b.get("/inbox")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "What needs attention first: the highest risk, then the soonest expiry.")
		assert.Contains(t, page.body, `href="/inbox?order=newest"`)
		at := order(page.body, lateCritical, high, soonLow)
		assert.True(t, at[0] < at[1] && at[1] < at[2], "critical, then high, then low: %v", at)

		page = b.get("/inbox?order=newest")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "Newest first.")
		at = order(page.body, high, lateCritical, soonLow)
		assert.True(t, at[0] < at[1] && at[1] < at[2], "the newest first: %v", at)

		bad := b.get("/inbox?order=urgent")
		assert.Equal(t, http.StatusBadRequest, bad.status)
		assert.Contains(t, bad.body, "Order must be attention or newest.")
	})
}
