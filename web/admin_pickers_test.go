package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// The key and webhook pickers offer what exists and mark the rest: a box for
// a scope or kind nothing uses yet is labelled and cannot be ticked, unless
// it already is (set through the API, which accepts it), so saving a form
// never drops it.
func TestAdminPickersMarkWhatIsNotYetThere(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		keys := b.get("/admin/keys")
		require.Equal(t, http.StatusOK, keys.status, keys.body)
		for _, sc := range scopes.All {
			if scopes.IsAvailable(sc) {
				assert.Contains(t, keys.body, `value="`+sc+`">`, "%s can be ticked", sc)
				assert.NotContains(t, keys.body, `<code>`+sc+`</code> <span class="hint">`)
			} else {
				assert.Contains(t, keys.body, `value="`+sc+`" disabled>`, "%s cannot be ticked", sc)
				assert.Contains(t, keys.body, `<code>`+sc+`</code> <span class="hint">not yet available</span>`)
			}
		}
		// A scope that was sent stays ticked and can be sent again: the
		// form refuses only the missing name.
		r := b.post("/admin/keys", url.Values{"csrf": {csrf}, "scopes": {scopes.ReviewsRead}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, r.body, `value="`+scopes.ReviewsRead+`" checked>`)

		form := b.get("/admin/webhooks")
		require.Equal(t, http.StatusOK, form.status, form.body)
		for _, k := range events.WebhookKinds() {
			if events.IsEmitted(k) {
				assert.Contains(t, form.body, `value="`+k+`">`, "%s can be ticked", k)
				assert.NotContains(t, form.body, `<code>`+k+`</code> <span class="hint">`)
			} else {
				assert.Contains(t, form.body, `value="`+k+`" disabled>`, "%s cannot be ticked", k)
				assert.Contains(t, form.body, `<code>`+k+`</code> <span class="hint">not yet emitted</span>`)
			}
		}

		// An endpoint subscribed through the API to a kind not yet emitted
		// keeps it ticked on its page.
		ep, err := s.store.CreateWebhookEndpoint(context.Background(), s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/hook",
			Format: models.FormatJSON, Events: []string{events.GateDenied, events.ApprovalApproved}, Enabled: true, Secret: "whsec_json"})
		require.NoError(t, err)
		page := b.get("/admin/webhooks/" + ep.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, `value="`+events.GateDenied+`" checked>`)
	})
}
