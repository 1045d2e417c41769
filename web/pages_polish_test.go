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

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/webhooks"
)

// TestPageMessagesStartWithACapital: a page shows an error as a sentence
// naming its field, capitalised unless it starts with a name whose case
// matters, with a full stop; the API's message is left as it is.
func TestPageMessagesStartWithACapital(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ field, msg, want string }{
		{"since", "since must not be in the future", "Since must not be in the future."},
		{"url", "url is refused: the URL must use https, not ftp", "URL is refused: the URL must use https, not ftp."},
		{"amount", "must be a number", "Amount: must be a number."},
		{"confirm", "tick Confirm beside the key first", "Tick Confirm beside the key first."},
		{"", "the condition does not compile", "The condition does not compile."},
		{"requiredApprovals", "requiredApprovals must be at least 2", "requiredApprovals must be at least 2."},
		{"events", "events[1]: unknown event", "events[1]: unknown event."},
		{"", "ada@example.com is the last active owner", "ada@example.com is the last active owner."},
		{"", "Only an owner can do that.", "Only an owner can do that."},
	} {
		e := apperr.Field(apperr.InvalidRequest, tc.field, "%s", tc.msg)
		assert.Equal(t, tc.want, web.PersonMessage(e, nil), tc.msg)
		assert.Equal(t, tc.msg, e.Message, "the API's message is unchanged")
	}
}

// TestPageMessagesNameFieldsByTheirLabels: a refusal on a form names the
// field as the form labels it and says what it must be in a person's
// words, not the service's field path or a schema library's wording.
func TestPageMessagesNameFieldsByTheirLabels(t *testing.T) {
	t.Parallel()
	schema := apperr.Field(apperr.InvalidRequest, "corrections.amount",
		"amount does not meet the action's schema: amount maximum: got 5,000, want 1,000")
	schema.Says = "must be at most 1,000"
	for _, tc := range []struct {
		e      *apperr.Error
		labels map[string]string
		want   string
	}{
		{schema, map[string]string{"corrections.amount": "amount"}, "Amount must be at most 1,000."},
		{apperr.Field(apperr.InvalidRequest, "name", "name is required"), map[string]string{"name": "Name"}, "Name is required."},
		{apperr.Field(apperr.InvalidRequest, "email", "email must be an email address"), map[string]string{"email": "Email address"},
			"Email address must be an email address, such as name@example.com."},
		{apperr.Field(apperr.InvalidAnswer, "answers.seats", "answers.seats: an answer is required"),
			map[string]string{"answers.seats": "The answer to “Seats?”"}, "The answer to “Seats?” is required."},
		{apperr.Field(apperr.InvalidAnswer, "answers.seats", "answers.seats: must be a number"),
			map[string]string{"answers.seats": "The answer to “Seats?”"}, "The answer to “Seats?” must be a number."},
		{apperr.Field(apperr.InvalidRequest, "requiredApprovals", "an approval rule needs requiredApprovals, from 2 to 20"),
			map[string]string{"requiredApprovals": "Approvals needed"}, "An approval rule needs “Approvals needed”, from 2 to 20."},
		{apperr.Field(apperr.InvalidRequest, "reason", "an ethics rule matched this request, so approving it needs a written reason"),
			map[string]string{"reason": "Reason"}, "An ethics rule matched this request, so approving it needs a written reason."},
		{apperr.Field(apperr.InvalidRequest, "scopes", "an agent key needs at least one scope"),
			map[string]string{"scopes": "Scopes"}, "Scopes: an agent key needs at least one scope."},
		{apperr.Field(apperr.InvalidRequest, "events[1]", "unknown event \"x\""), map[string]string{"events": "Events"}, "Events, entry 2: unknown event \"x\"."},
	} {
		assert.Equal(t, tc.want, web.PersonMessage(tc.e, tc.labels), tc.e.Message)
	}
}

// TestNotFoundPageLinksToTheInbox: a request that is not there (or not the
// person's) answers 404 with a way back to the inbox.
func TestNotFoundPageLinksToTheInbox(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		b.signIn(s, "ada@example.com")
		r := b.get("/approvals/apr_missing")
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.Contains(t, r.body, `<a class="button" href="/inbox">Back to your inbox</a>`)
		assert.Contains(t, r.body, "<p>Approval apr_missing not found.</p>", "the message starts with a capital")
	})
}

// TestDestructiveAdminActionsAskForConfirmation: revoking a key, deleting a
// rule or an endpoint and removing a team are red buttons beside a
// Confirm box the browser requires; without it the handler refuses and
// nothing changes.
func TestDestructiveAdminActionsAskForConfirmation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		key, _, err := s.store.CreateKey(ctx, s.org.ID, "billing agent", models.KeyAgent, []string{scopes.ApprovalsRead})
		require.NoError(t, err)
		rule := &models.Rule{OrganizationID: s.org.ID, Name: "two for big", Kind: "approval", RequiredApprovals: 2, Enabled: true}
		require.NoError(t, s.store.CreateRule(ctx, rule))
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/hook",
			Format: models.FormatJSON, Enabled: true, Secret: "whsec_json"})
		require.NoError(t, err)
		team, err := testenv.CreateTeam(s.store, ctx, s.org.ID, "Finance", models.TeamKindTeam, nil)
		require.NoError(t, err)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		for _, tc := range []struct{ page, action, button, refusal string }{
			{"/admin/keys", "/admin/keys/" + key.ID + "/revoke", "Revoke", "Tick Confirm beside the key first."},
			{"/admin/rules", "/admin/rules/" + rule.ID + "/delete", "Delete", "Tick Confirm beside the rule first."},
			{"/admin/webhooks/" + ep.ID, "/admin/webhooks/" + ep.ID + "/delete", "Delete endpoint", "Tick Confirm beside the Delete endpoint button first."},
			{"/admin/teams", "/admin/teams/" + team.ID + "/remove", "Remove", "Tick Confirm beside the team first."},
		} {
			body := b.get(tc.page).body
			form := `<form method="post" action="` + tc.action + `" class="confirm-form">`
			require.Contains(t, body, form, tc.page)
			rest := body[strings.Index(body, form):]
			rest = rest[:strings.Index(rest, "</form>")]
			assert.Contains(t, rest, `<input type="checkbox" name="confirm" value="yes" required> Confirm`, tc.action)
			assert.Contains(t, rest, `<button type="submit" class="small danger">`+tc.button, tc.action)

			r := b.post(tc.action, url.Values{"csrf": {csrf}})
			assert.Equal(t, http.StatusBadRequest, r.status, tc.action)
			assert.Equal(t, tc.refusal, problemOf(t, r), tc.action)
		}
		keys, _, err := s.store.ListKeys(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, keys, 1)
		assert.Nil(t, keys[0].RevokedAt, "not revoked without Confirm")
		rules, _, err := s.store.ListRules(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Len(t, rules, 1, "not deleted without Confirm")
		_, err = s.store.GetWebhookEndpoint(ctx, s.org.ID, ep.ID)
		assert.NoError(t, err, "not deleted without Confirm")
		teams, _, err := s.store.ListTeams(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Len(t, teams, 1, "not removed without Confirm")

		r := b.post("/admin/keys/"+key.ID+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "The key was revoked")
	})
}

// TestDeliveryLogShowsEachSend: attempts are numbered once (by the number
// the receiver got); "sent again" and the sends appear only after a
// resend, and the resend shows its own state and attempts apart from the
// first send's.
func TestDeliveryLogShowsEachSend(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/hook",
			Format: models.FormatJSON, Events: []string{events.ApprovalRequested}, Enabled: true, Secret: "whsec_json"})
		require.NoError(t, err)
		d := s.failedDelivery(t, s.org.ID, ep)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		page := b.get("/admin/webhooks/" + ep.ID).body
		assert.NotContains(t, page, "<ol", "attempts are not numbered by the list as well")
		assert.Equal(t, 1, strings.Count(page, "Attempt 1: <time"))
		assert.Equal(t, 1, strings.Count(page, "Attempt 2: <time"))
		assert.NotContains(t, page, "sent again", "no sends before a resend")
		assert.NotContains(t, page, "First send")

		r := b.post("/admin/deliveries/"+d.ID+"/resend", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		page = b.get(r.header.Get("Location")).body
		assert.Contains(t, page, `<span class="status status-pending">pending</span> <span class="hint">sent again 1×</span>`)
		first := `<p class="send-head">First send: <span class="status status-failed">failed</span></p>`
		again := `<p class="send-head">Sent again: <span class="status status-pending">pending</span></p>`
		require.Contains(t, page, first)
		require.Contains(t, page, again)
		resend := page[strings.Index(page, again):]
		resend = resend[:strings.Index(resend, "</td>")]
		assert.Contains(t, resend, "none yet", "the resend has no attempts yet")
		assert.NotContains(t, resend, "Attempt 1:", "the first send's attempts stay with it")

		// The resend's attempt is numbered on from the first send's and
		// shown under it, with its own outcome.
		dl, err := s.store.GetDelivery(ctx, s.org.ID, d.ID)
		require.NoError(t, err)
		require.NoError(t, webhooks.Attempts{Store: s.store.DeliveryStore}.Record(ctx, &dl.Delivery, models.AttemptResult{Attempt: 3, At: models.Now().Add(time.Hour),
			StatusCode: 200, Latency: 40 * time.Millisecond}))
		page = b.get("/admin/webhooks/" + ep.ID).body
		assert.Contains(t, page, first)
		delivered := `<p class="send-head">Sent again: <span class="status status-delivered">delivered</span></p>`
		require.Contains(t, page, delivered)
		resend = page[strings.Index(page, delivered):]
		resend = resend[:strings.Index(resend, "</td>")]
		assert.Contains(t, resend, "Attempt 3: <time")
		assert.Contains(t, resend, "HTTP 200 · 40 ms")
		assert.NotContains(t, resend, "Attempt 2:")
	})
}
