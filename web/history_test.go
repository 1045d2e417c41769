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
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestHistoryListsSettledRequests: the history page lists the settled
// requests a person was asked or made, newest first, filtered by outcome
// and role, each linking to its page; pending ones and other people's stay
// out.
func TestHistoryListsSettledRequests(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		// Each settles after the one before, at its transition.
		settle := func(a *approvals.Approval, status string) {
			testenv.Transition(t, s.store, approvals.Records(s.store), s.org.ID, a.ID, 1, func(a *approvals.Approval) { a.Status = status })
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
		testenv.Transition(t, s.store, approvals.Records(s.store), s.org.ID, made.ID, 1, func(a *approvals.Approval) {
			a.Status, a.Requester = "cancelled", s.ada.ID
		})

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		all := b.get("/history")
		require.Equal(t, http.StatusOK, all.status, all.body)
		for _, a := range []*approvals.Approval{approved, expired, made} {
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
		assert.Contains(t, bad.body, "approved, rejected, changes_requested, complete, expired, cancelled")

		assert.Equal(t, http.StatusSeeOther, s.browser(t).get("/history").status, "signed out: to the sign-in page")
	})
}

// TestHistoryListsSettledRequestsForInformation: the history lists the
// settled requests for information a person was asked or made beside the
// approvals, in one list by when each settled, each with its kind, its
// outcome and a link to its page; open ones, other people's and another
// organisation's stay out, and a guest sees only what asked them.
func TestHistoryListsSettledRequestsForInformation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		gus, _, err := s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		now := time.Now().UTC().Truncate(time.Second)
		collection := func(orgID, title, status string, settledAt time.Time, respondents ...string) *collections.Collection {
			c := &collections.Collection{RequestBase: models.RequestBase{OrganizationID: orgID, Title: title,
				ExpiresAt: now.Add(time.Hour), Requester: "key_test", RequestedBy: "purchasing agent"}, RespondentIDs: respondents, RequiredResponses: 1,
			}
			_, err := requests.Insert(ctx, s.store, collections.Records(s.store), c, nil)
			require.NoError(t, err)
			if status != states.Open {
				testenv.Transition(t, s.store, collections.Records(s.store), orgID, c.ID, 1, func(c *collections.Collection) {
					c.Status, c.SettledAt = status, &settledAt
				})
			}
			return c
		}
		complete := collection(s.org.ID, "Vendor check", states.Complete, now.Add(-time.Hour), s.ada.ID, bob.ID)
		expired := collection(s.org.ID, "Office survey", states.Expired, now.Add(-3*time.Hour), s.ada.ID)
		open := collection(s.org.ID, "Still open", states.Open, time.Time{}, s.ada.ID)
		bobs := collection(s.org.ID, "Bob's questions", states.Cancelled, now.Add(-time.Minute), bob.ID)
		guests := collection(s.org.ID, "Partner details", states.Complete, now.Add(-time.Minute), gus.ID)
		elsewhere := collection(s.otherOrg(t).ID, "Another organisation's", states.Complete, now, s.ada.ID)
		made := collection(s.org.ID, "Ada asked the team", states.Open, time.Time{}, bob.ID)
		madeAt := now.Add(-4 * time.Hour)
		testenv.Transition(t, s.store, collections.Records(s.store), s.org.ID, made.ID, 1, func(c *collections.Collection) {
			c.Status, c.SettledAt, c.Requester = states.Cancelled, &madeAt, s.ada.ID
		})
		// An approval settled between the two requests for information.
		decided := s.approval(t, "Refund order 42", models.RiskLow, now.Add(time.Hour), s.ada.ID)
		decidedAt, decidedBy := now.Add(-2*time.Hour), "Ada Lovelace"
		testenv.Transition(t, s.store, approvals.Records(s.store), s.org.ID, decided.ID, 1, func(a *approvals.Approval) {
			a.Status, a.DecidedBy, a.DecidedAt = states.Approved, &decidedBy, &decidedAt
		})

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		all := b.get("/history")
		require.Equal(t, http.StatusOK, all.status, all.body)
		assert.Contains(t, all.body, `href="/collections/`+complete.ID+`"`)
		assert.Contains(t, all.body, `href="/collections/`+expired.ID+`"`)
		assert.Contains(t, all.body, `href="/collections/`+made.ID+`"`, "one Ada made")
		assert.Contains(t, all.body, `href="/approvals/`+decided.ID+`"`)
		for _, c := range []*collections.Collection{open, bobs, guests, elsewhere} {
			assert.NotContains(t, all.body, c.ID, c.Title)
		}
		order := []string{complete.ID, decided.ID, expired.ID, made.ID}
		for i := 1; i < len(order); i++ {
			assert.Less(t, strings.Index(all.body, order[i-1]), strings.Index(all.body, order[i]), "the most recently settled first")
		}
		item := func(body, id string) string {
			start := strings.Index(body, id)
			require.GreaterOrEqual(t, start, 0, id)
			return body[start : start+strings.Index(body[start:], "</li>")]
		}
		vendor := item(all.body, complete.ID)
		assert.Contains(t, vendor, `<span class="status status-complete">complete</span>`, "its outcome")
		assert.Contains(t, vendor, "Request for information requested by purchasing agent · complete", "its kind")
		assert.NotContains(t, vendor, "risk")
		assert.Contains(t, item(all.body, expired.ID), `<span class="status status-expired">expired</span>`)
		refund := item(all.body, decided.ID)
		assert.Contains(t, refund, "Approval requested by billing agent · approved by Ada Lovelace")
		assert.Contains(t, refund, `<time datetime="`+now.Add(-2*time.Hour).Format(time.RFC3339)+`"`, "when it was decided")

		onlyComplete := b.get("/history?status=complete")
		assert.Contains(t, onlyComplete.body, complete.ID)
		assert.NotContains(t, onlyComplete.body, decided.ID)
		assert.NotContains(t, onlyComplete.body, expired.ID)
		mine := b.get("/history?role=made")
		assert.Contains(t, mine.body, made.ID)
		assert.NotContains(t, mine.body, complete.ID)

		page := b.get("/collections/" + complete.ID)
		require.Equal(t, http.StatusOK, page.status, "the link opens its page")
		assert.Contains(t, page.body, "This request is complete")

		g := s.browser(t)
		g.signIn(s, "gus@partner.example")
		seen := g.get("/history")
		require.Equal(t, http.StatusOK, seen.status, seen.body)
		assert.Contains(t, seen.body, guests.ID)
		for _, id := range []string{complete.ID, expired.ID, made.ID, decided.ID} {
			assert.NotContains(t, seen.body, id, "a guest sees only what asked them")
		}
	})
}
