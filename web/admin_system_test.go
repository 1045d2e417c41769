package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/web"
)

// TestAdminSystemShowsWhatIsStuck: the System page counts the
// organisation's open requests, lists the oldest with their page and
// their workflow in the Temporal UI, marks one past its expiry as stuck,
// and names endpoints switched off or failing; another organisation's
// requests are not counted.
func TestAdminSystemShowsWhatIsStuck(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := newSiteWith(t, models.NewStore(db, testenv.Keys()),
			web.Deps{Codec: &web.CodecSettings{UIOrigin: "http://temporal-ui.test", Namespace: "assent"}}, app.Deps{})
		owner := models.RoleOwner
		testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Role = owner })
		approval := func(orgID, title string, age, expiresIn time.Duration) *approvals.Approval {
			created := models.Now().Add(-age)
			a := &approvals.Approval{RequestBase: models.RequestBase{OrganizationID: orgID, Title: title, ExpiresAt: models.Now().Add(expiresIn),
				Requester: "key_test", RequestedBy: "agent"}, Risk: models.RiskLow,
				RequiredApprovals: 1}
			_, err := requests.Insert(ctx, s.store, approvals.Records(s.store), a, nil)
			require.NoError(t, err)
			require.NoError(t, db.Model(a).Updates(map[string]any{"status": states.Pending, "created_at": created}).Error)
			return a
		}
		stuck := approval(s.org.ID, "Pay the <stuck> invoice", 50*time.Hour, -2*time.Hour)
		approval(s.org.ID, "Fresh", time.Hour, time.Hour)
		other, err := s.store.CreateOrganization(ctx, "Other", models.PlanTeam)
		require.NoError(t, err)
		approval(other.ID, "Theirs", 90*time.Hour, -time.Hour)

		off, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://off.example/hook",
			Format: models.FormatJSON, Events: events.WebhookKinds(), Enabled: true, Secret: "whsec_a"})
		require.NoError(t, err)
		failing, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://failing.example/hook",
			Format: models.FormatJSON, Events: events.WebhookKinds(), Enabled: true, Secret: "whsec_b"})
		require.NoError(t, err)
		require.NoError(t, db.Model(off).Updates(map[string]any{"switched_off_at": models.Now(), "consecutive_failures": 15}).Error)
		require.NoError(t, db.Model(failing).Updates(map[string]any{"consecutive_failures": 3, "last_error": "503 Service Unavailable"}).Error)

		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		page := b.get("/admin/system")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, `<tr><th scope="row" class="cap">approval</th><td>2</td><td><strong>1</strong></td>`,
			"two open here, one stuck; the other organisation's is not counted")
		assert.Contains(t, page.body, `<a href="/approvals/`+stuck.ID+`">Pay the &lt;stuck&gt; invoice</a>`, "the oldest first, escaped")
		assert.Contains(t, page.body, "<td>2 days</td>")
		assert.Contains(t, page.body, "<strong>stuck: expired")
		link := "http://temporal-ui.test/namespaces/assent/workflows?query=" + url.QueryEscape(`WorkflowId="approval/`+stuck.ID+`"`)
		assert.Contains(t, page.body, `<a href="`+link+`">In the Temporal UI`)
		assert.NotContains(t, page.body, "Theirs")
		assert.Contains(t, page.body, `<a href="/admin/webhooks/`+off.ID+`">`)
		assert.Contains(t, page.body, "3 failures in a row: 503 Service Unavailable")

		overview := b.get("/admin")
		assert.Contains(t, overview.body, `<a href="/admin/system">System</a>`)
	})
}
