package web_test

import (
	"context"
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

// TestHistoryListsSettledRequests: the history page lists the settled
// requests a person was asked or made, newest first, filtered by outcome
// and role, each linking to its page; pending ones and other people's stay
// out.
func TestHistoryListsSettledRequests(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		settle := func(a *models.Approval, status string) {
			require.NoError(t, db.Model(&models.Approval{}).Where("id = ?", a.ID).
				Updates(map[string]any{"status": status, "seq": 1}).Error)
		}
		in := time.Now().Add(time.Hour)
		approved := s.approval(t, "Refund order 42", models.RiskLow, in, s.ada.ID)
		settle(approved, "approved")
		expired := s.approval(t, "Rotate the keys", models.RiskHigh, in, s.ada.ID)
		settle(expired, "expired")
		s.approval(t, "Still waiting", models.RiskLow, in, s.ada.ID)
		notMine := s.approval(t, "Bob's only", models.RiskLow, in, bob.ID)
		settle(notMine, "rejected")
		made := s.approval(t, "Ada asked this", models.RiskLow, in, bob.ID)
		require.NoError(t, db.Model(&models.Approval{}).Where("id = ?", made.ID).Update("requester", s.ada.ID).Error)
		settle(made, "cancelled")

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		all := b.get("/history")
		require.Equal(t, http.StatusOK, all.status, all.body)
		for _, a := range []*models.Approval{approved, expired, made} {
			assert.Contains(t, all.body, `href="/approvals/`+a.ID+`"`)
		}
		assert.NotContains(t, all.body, "Still waiting", "pending requests are in the inbox")
		assert.NotContains(t, all.body, "Bob&#39;s only", "another person's request")
		assert.Less(t, strings.Index(all.body, made.ID), strings.Index(all.body, approved.ID), "newest first")

		onlyExpired := b.get("/history?status=expired")
		assert.Contains(t, onlyExpired.body, expired.ID)
		assert.NotContains(t, onlyExpired.body, approved.ID)
		assert.Contains(t, onlyExpired.body, `<option value="expired" selected>`)

		mine := b.get("/history?role=made")
		assert.Contains(t, mine.body, made.ID)
		assert.NotContains(t, mine.body, approved.ID)
		asked := b.get("/history?role=asked")
		assert.Contains(t, asked.body, approved.ID)
		assert.NotContains(t, asked.body, made.ID)

		bad := b.get("/history?status=pending")
		assert.Equal(t, http.StatusBadRequest, bad.status)
		assert.Contains(t, bad.body, "approved, rejected, expired, cancelled")

		assert.Equal(t, http.StatusSeeOther, s.browser(t).get("/history").status, "signed out: to the sign-in page")
	})
}
