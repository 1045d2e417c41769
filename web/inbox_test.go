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

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
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
		order := func(body string, as ...*approvals.Approval) []int {
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

// TestInboxListsEachKindInItsSection: approvals first (with their risk,
// an ethics flag and how many approved of those needed), then requests
// for information under their heading (how many questions, when wanted,
// when they close); the summary counts them all.
func TestInboxListsEachKindInItsSection(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		now := time.Now()
		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Refund <big>",
			ExpiresAt: now.Add(3 * time.Hour).UTC().Truncate(time.Second), Requester: "key_test", RequestedBy: "billing agent"},
			Risk: models.RiskHigh, ApproverIDs: []string{s.ada.ID}, RequiredApprovals: 2,
			Concerns: models.JSON[[]models.Concern]{V: []models.Concern{{Principle: "privacy", Rule: "no personal data", Concern: "a person's data"}}}}
		_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), a, nil)
		require.NoError(t, err)
		qs, err := questions.Define([]questions.Input{{ID: "a", Prompt: "A", Kind: questions.Text}, {ID: "b", Prompt: "B", Kind: questions.Text}})
		require.NoError(t, err)
		due := now.Add(30 * time.Hour).UTC().Truncate(time.Second)
		c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Vendor check",
			ExpiresAt: now.Add(72 * time.Hour).UTC().Truncate(time.Second), Requester: "key_test", RequestedBy: "purchasing agent"},
			Questions: models.JSON[[]questions.Question]{V: qs}, Respondents: []string{"ada@example.com"}, RespondentIDs: []string{s.ada.ID},
			RequiredResponses: 1, DueAt: &due}
		_, err = requests.Insert(ctx, s.store, collections.Records(s.store), c, nil)
		require.NoError(t, err)

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		page := b.get("/inbox")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "2 waiting on you, 1 due within a day.")
		assert.Contains(t, page.body, `<a class="title" href="/approvals/`+a.ID+`">Refund &lt;big&gt;</a>`)
		assert.Contains(t, page.body, `<span class="risk risk-high">high risk</span>`)
		assert.Contains(t, page.body, `<span class="flag">Ethics concern</span>`)
		assert.Regexp(t, `Requested by billing agent · expires <time datetime="[^"]+" title="[^"]+">[^<]+</time> · 0 of 2 approvals</p>`, page.body)
		heading := strings.Index(page.body, "<h2>Requests for information</h2>")
		require.Positive(t, heading, page.body)
		assert.Less(t, strings.Index(page.body, a.ID), heading, "approvals come first")
		assert.Less(t, heading, strings.Index(page.body, `href="/collections/`+c.ID+`"`))
		assert.Regexp(t, `Requested by purchasing agent · 2 questions · wanted <time datetime="[^"]+" title="[^"]+">[^<]+</time> · closes <time`, page.body)
		assert.NotContains(t, page.body, "<h2>Reviews</h2>", "a kind with nothing waiting shows no section")
		assert.NotContains(t, page.body, "Showing the first", "everything waiting is listed")
	})
}
