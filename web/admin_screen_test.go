package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
)

// TestAdminModelScreen: the settings page switches the model screen on
// through the API's checks, keeps what was typed when refused, never shows
// the key, and switches it off; the approval page marks the screen's
// concerns.
func TestAdminModelScreen(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSiteWith(t, db, app.Deps{NetPolicy: netguard.DevLoopback})
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		page := b.get("/admin/model-screen")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "<dt>Screening</dt><dd>off</dd>")

		r := b.post("/admin/model-screen", url.Values{"csrf": {csrf}, "url": {"ftp://llm.example/v1"}, "model": {"m1"}, "apiKey": {"sk-page-999"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, strings.ToLower(problemOf(t, r)), "url must use https")
		assert.Contains(t, r.body, `value="ftp://llm.example/v1"`, "what was typed stays")
		assert.NotContains(t, r.body, "sk-page-999")

		r = b.post("/admin/model-screen", url.Values{"csrf": {csrf}, "url": {"http://127.0.0.1:9/v1/chat/completions"}, "model": {"m1"}, "apiKey": {"sk-page-999"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		page = b.get("/admin/model-screen?done=screen-saved")
		assert.Contains(t, page.body, "<dt>Screening</dt><dd>on</dd>")
		assert.Contains(t, page.body, "<dt>API key</dt><dd>set</dd>")
		assert.NotContains(t, page.body, "sk-page-999", "the key is never shown")
		m, err := s.store.ModelScreen(ctx, s.org.ID)
		require.NoError(t, err)
		assert.Equal(t, "sk-page-999", m.APIKey)

		r = b.post("/admin/model-screen/off", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		on, err := s.store.ModelScreenOn(ctx, s.org.ID)
		require.NoError(t, err)
		assert.False(t, on)

		a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: s.org.ID, Title: "Refund",
			Requester: "key_test", RequestedBy: "agent", ExpiresAt: time.Now().Add(time.Hour).UTC()}, Risk: models.RiskMedium, ApproverIDs: []string{s.ada.ID},
			RequiredApprovals: 1,
			Concerns: models.JSON[[]models.Concern]{V: []models.Concern{{Principle: "privacy", Rule: "data", Concern: "From a rule."},
				{Principle: "privacy", Rule: models.ScreenRule, Concern: "From the model."}}}}
		_, err = requests.Insert(ctx, s.store, approvals.Records(s.store), a, nil)
		require.NoError(t, err)
		page = b.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "From a rule.</li>")
		assert.Contains(t, page.body, `From the model. <span class="hint">(raised by the model screen)</span>`)
	})
}
