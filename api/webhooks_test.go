package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func TestWebhookAdmin(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := deliveryStack(t, db)
		hook := newReceiver(t, "")
		refused := []struct{ name, body, field string }{
			{"no url", `{}`, "url"},
			{"private address", `{"url":"http://10.0.0.1/hook"}`, "url"},
			{"metadata address", `{"url":"http://169.254.169.254/"}`, "url"},
			{"unknown event", `{"url":"` + hook.srv.URL + `","events":["approval.requested","approval.maybe"]}`, "events[1]"},
			{"test event", `{"url":"` + hook.srv.URL + `","events":["webhook.test"]}`, "events[0]"},
			{"format", `{"url":"` + hook.srv.URL + `","format":"xml"}`, "format"},
		}
		for _, tc := range refused {
			r := s.do(t, "POST", "/api/v1/admin/webhooks", s.adminKey, tc.body, nil)
			assert.Equal(t, 400, r.status, tc.name)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
		}
		// A misspelt kind is answered with the kinds there are.
		msg := errField(s.do(t, "POST", "/api/v1/admin/webhooks", s.adminKey, `{"url":"`+hook.srv.URL+`","events":["approval.aproved"]}`, nil), "message")
		assert.Contains(t, msg, `unknown event "approval.aproved"`)
		assert.Contains(t, msg, "approval.approved, approval.rejected")
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/admin/webhooks", s.agentKey, `{"url":"`+hook.srv.URL+`"}`, nil).status)

		r := s.do(t, "POST", "/api/v1/admin/webhooks", s.adminKey, `{"url":"`+hook.srv.URL+`"}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		id := r.decoded["id"].(string)
		secret := r.decoded["secret"].(string)
		assert.True(t, strings.HasPrefix(secret, "whsec_"))
		assert.Equal(t, "json", r.decoded["format"])
		assert.Equal(t, []any{}, r.decoded["events"], "no events: every event")
		got := s.do(t, "GET", "/api/v1/admin/webhooks/"+id, s.adminKey, "", nil)
		assert.NotContains(t, got.decoded, "secret", "the secret is shown once")
		assert.Len(t, s.do(t, "GET", "/api/v1/admin/webhooks", s.adminKey, "", nil).decoded["data"], 1)

		// Send test: signed, marked test, not retried, not counted.
		hook.mu.Lock()
		hook.secret, hook.answers = secret, []int{200, 500}
		hook.mu.Unlock()
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.adminKey, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, 200.0, r.decoded["statusCode"])
		assert.Equal(t, true, r.decoded["delivered"])
		require.Len(t, hook.received(), 1)
		assert.NoError(t, hook.received()[0].verified)
		assert.Equal(t, true, hook.received()[0].body["test"])
		// Its own kind, so a receiver acting on the header never acts on a test.
		assert.Equal(t, events.WebhookTest, hook.received()[0].event)
		assert.Equal(t, events.WebhookTest, hook.received()[0].body["event"])
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.adminKey, "", nil)
		assert.Equal(t, 500.0, r.decoded["statusCode"])
		assert.Equal(t, false, r.decoded["delivered"])
		time.Sleep(300 * time.Millisecond)
		assert.Len(t, hook.received(), 2, "a failed test is not retried")
		ep, err := s.store.GetWebhookEndpoint(context.Background(), s.org.ID, id)
		require.NoError(t, err)
		assert.Zero(t, ep.ConsecutiveFailures, "a test never counts toward switch-off")
		ds, err := s.store.ListDeliveries(context.Background(), s.org.ID)
		require.NoError(t, err)
		assert.Empty(t, ds, "a test is not a delivery")
		// Even one failure short of the switch-off, a failed test leaves it on.
		require.NoError(t, s.store.DB().Model(&models.WebhookEndpoint{}).Where("id = ?", id).Update("consecutive_failures", models.SwitchOffAfter-1).Error)
		hook.mu.Lock()
		hook.answers = []int{500}
		hook.mu.Unlock()
		assert.Equal(t, 500.0, s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.adminKey, "", nil).decoded["statusCode"])
		ep, err = s.store.GetWebhookEndpoint(context.Background(), s.org.ID, id)
		require.NoError(t, err)
		assert.Equal(t, models.SwitchOffAfter-1, ep.ConsecutiveFailures)
		assert.Nil(t, ep.SwitchedOffAt)
		require.NoError(t, s.store.DB().Model(&models.WebhookEndpoint{}).Where("id = ?", id).Update("consecutive_failures", 0).Error)

		// Rotation: both secrets sign for 24 hours.
		r = s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/rotate-secret", s.adminKey, "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		fresh := r.decoded["secret"].(string)
		assert.NotEqual(t, secret, fresh)
		until, err := time.Parse(time.RFC3339, r.decoded["previousSecretValidUntil"].(string))
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(24*time.Hour), until, time.Minute)
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.adminKey, "", nil).status)
		last := hook.received()[3]
		assert.NoError(t, last.verified, "a receiver still on the old secret accepts")
		hook.mu.Lock()
		hook.secret = fresh
		hook.mu.Unlock()
		require.Equal(t, 200, s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.adminKey, "", nil).status)
		assert.NoError(t, hook.received()[4].verified, "and so does one on the new secret")

		// Switching a switched-off endpoint on again resets it.
		now := models.Now()
		require.NoError(t, s.store.DB().Model(&models.WebhookEndpoint{}).Where("id = ?", id).
			Updates(map[string]any{"switched_off_at": now, "consecutive_failures": 20}).Error)
		r = s.do(t, "GET", "/api/v1/admin/webhooks/"+id, s.adminKey, "", nil)
		assert.NotNil(t, r.decoded["switchedOffAt"], "the admin API shows the switch-off")
		r = s.do(t, "PATCH", "/api/v1/admin/webhooks/"+id, s.adminKey, `{"enabled":true,"events":["approval.approved"]}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Nil(t, r.decoded["switchedOffAt"])
		assert.Equal(t, 0.0, r.decoded["consecutiveFailures"])
		assert.Equal(t, []any{events.ApprovalApproved}, r.decoded["events"])
		assert.Equal(t, "url", errField(s.do(t, "PATCH", "/api/v1/admin/webhooks/"+id, s.adminKey, `{"url":"ftp://x"}`, nil), "field"))

		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/admin/webhooks/"+id, s.otherAdmin, "", nil).status)
		assert.Equal(t, 404, s.do(t, "POST", "/api/v1/admin/webhooks/"+id+"/test", s.otherAdmin, "", nil).status)
		assert.Equal(t, 204, s.do(t, "DELETE", "/api/v1/admin/webhooks/"+id, s.adminKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "GET", "/api/v1/admin/webhooks/"+id, s.adminKey, "", nil).status)
	})
}
