package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/slacktest"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/worker"
)

const (
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	slackToken  = "xoxb-1234-5678-abcdefghijkl"
)

// slackStack is the stack with a fake Slack: the API's Slack app and the
// worker's chat.postMessage call it, the dispatcher runs, and the
// organisation's Slack app is connected with a channel.
type slackStack struct {
	*stack
	slack *slacktest.Server
	db    *gorm.DB
}

func newSlackStack(t *testing.T, db *gorm.DB) *slackStack {
	t.Helper()
	fake := slacktest.New(slackToken)
	t.Cleanup(fake.Close)
	s := newStackWorker(t, db, netguard.DevLoopback, worker.Deps{SlackAPIURL: fake.APIURL()})
	tc := s.tc
	// The API's Slack app calls the fake; the stack's was built before it.
	built := s.built
	built.SlackAPIURL = fake.APIURL()
	srv := httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test",
		Services: app.Build(built).API()}))
	t.Cleanup(srv.Close)
	s.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	d := &worker.Dispatcher{Client: tc, Store: s.store, Log: quiet, RetryUnit: 100 * time.Millisecond, Interval: 20 * time.Millisecond}
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	r := s.do(t, "PUT", "/api/v1/admin/integrations/slack", s.adminKey,
		fmt.Sprintf(`{"signingSecret":%q,"botToken":%q,"channel":"C0APPROVALS"}`, slackSecret, slackToken), nil)
	require.Equal(t, 200, r.status, string(r.body))
	fake.AddUser("U0BOB", "Bob@Example.com", false)
	fake.AddUser("U0CY", "cy@example.com", false)
	fake.AddUser("U0NOBODY", "nobody@example.com", false)
	fake.AddUser("U0GUEST", "bob@example.com", true)
	fake.AddStranger("U0STRANGER", "bob@example.com") // a Slack Connect partner's user with Bob's address
	fake.AddUser("U0GUS", "gus@partner.example", false)
	return &slackStack{stack: s, slack: fake, db: db}
}

// approval creates an approval for bob and returns its id and the message
// chat.postMessage posted about it.
func (s *slackStack) approval(t *testing.T, risk string) (string, slacktest.Post) {
	t.Helper()
	a := s.create(t, s.agentKey, fmt.Sprintf(`{"title":"Refund order %s","risk":%q,"approvers":["bob@example.com"],"input":{"amount":120}}`, risk, risk))
	id := a["id"].(string)
	var post slacktest.Post
	require.Eventually(t, func() bool {
		for _, p := range s.slack.Posts() {
			if strings.Contains(p.Text, "Refund order "+risk) {
				post = p
				return true
			}
		}
		return false
	}, 20*time.Second, 20*time.Millisecond, "the approval never reached the Slack channel")
	return id, post
}

// interact posts a signed interaction, as Slack does, at t.
func (s *slackStack) interact(t *testing.T, payload any, at time.Time, secret string) (int, []byte) {
	t.Helper()
	body := slacktest.Form(payload)
	req, err := http.NewRequest("POST", s.srv.URL+wire.SlackInteractionsPath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = slacktest.Sign(secret, at, body)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

func (s *slackStack) click(t *testing.T, user, action, value, trigger, respond string) {
	t.Helper()
	status, body := s.interact(t, slacktest.Click(user, action, value, trigger, s.slack.ResponseURL(respond)), time.Now(), slackSecret)
	require.Equal(t, 200, status, string(body))
	require.Empty(t, body, "Slack takes an empty 200 for a click")
}

func (s *slackStack) get(t *testing.T, id string) map[string]any {
	t.Helper()
	r := s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
	require.Equal(t, 200, r.status)
	return r.decoded
}

// timeline is the approval's audit entries' actions and details.
func (s *slackStack) timeline(t *testing.T, id string) []models.AuditEntry {
	t.Helper()
	var out []models.AuditEntry
	require.NoError(t, s.db.Where("subject_id = ?", id).Order("seq").Find(&out).Error)
	return out
}

// buttons are the action ids and values of a message's buttons.
func buttons(blocks []slack.Block) (ids []string, values []string) {
	for _, b := range blocks {
		if act, ok := b.(*slack.ActionBlock); ok {
			for _, e := range act.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					ids, values = append(ids, btn.ActionID), append(values, btn.Value)
				}
			}
		}
	}
	return ids, values
}

func text(blocks []slack.Block) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(blocks)
	// slack-go's blocks escape < and > whatever the encoder says.
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(b.String())
}

// ephemeral is the one message told to the clicker alone at respond.
func (s *slackStack) ephemeral(t *testing.T, respond string) string {
	t.Helper()
	var msgs []slack.WebhookMessage
	require.Eventually(t, func() bool { msgs = s.slack.Responses(respond); return len(msgs) > 0 }, 5*time.Second, 10*time.Millisecond)
	require.Len(t, msgs, 1)
	assert.Equal(t, slack.ResponseTypeEphemeral, msgs[0].ResponseType)
	assert.False(t, msgs[0].ReplaceOriginal)
	return msgs[0].Text
}

// TestSlackApproveEndToEnd: the approval request reaches the Slack channel
// with Approve, Reject and Open; a signed click from a member's Slack user
// approves it as proposed through the workflow, once however often Slack
// retries the click; the timeline says it was done in Slack by which
// Slack user; the message is updated in place for everyone.
func TestSlackApproveEndToEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSlackStack(t, db)
		_, err := s.store.CreateWebhookEndpoint(context.Background(), s.org.ID, models.NewWebhookEndpoint{URL: s.slack.HookURL("slack"),
			Format: models.FormatSlack, Events: []string{events.ApprovalRequested}, Enabled: true, Secret: "whsec_slack"})
		require.NoError(t, err)
		id, post := s.approval(t, "medium")
		assert.Equal(t, "C0APPROVALS", post.Channel)
		// A Slack-format endpoint of the same organisation carries the buttons too.
		var hooked []byte
		require.Eventually(t, func() bool {
			got := s.slack.Hooked("slack")
			if len(got) > 0 {
				hooked = got[0]
			}
			return hooked != nil
		}, 20*time.Second, 20*time.Millisecond)
		var webhookMsg struct{ Blocks slack.Blocks }
		require.NoError(t, json.Unmarshal(hooked, &webhookMsg))
		ids, _ := buttons(webhookMsg.Blocks.BlockSet)
		assert.Equal(t, []string{events.SlackApprove, events.SlackReject, events.SlackOpen}, ids)
		ids, values := buttons(post.Blocks.BlockSet)
		require.Equal(t, []string{events.SlackApprove, events.SlackReject, events.SlackOpen}, ids)
		value := s.org.ID + "/" + id
		assert.Equal(t, []string{value, value, value}, values, "the buttons carry the organisation and approval, no secret")

		s.click(t, "U0BOB", events.SlackApprove, value, "trigger-1", "r1")
		a := s.get(t, id)
		assert.Equal(t, "approved", a["status"])
		assert.Equal(t, s.bob.ID, a["decidedById"])
		assert.Equal(t, "Bob", a["decidedBy"])
		assert.JSONEq(t, `{"amount":120}`, string(must(json.Marshal(a["approvedInput"]))), "approved as proposed")

		updates := s.slack.Responses("r1")
		require.Len(t, updates, 1)
		assert.True(t, updates[0].ReplaceOriginal, "the message is replaced for everyone")
		assert.Empty(t, updates[0].ResponseType)
		shown := text(updates[0].Blocks.BlockSet)
		assert.Contains(t, shown, "*Approved*")
		assert.Contains(t, shown, "by Bob · ")
		assert.Contains(t, shown, "Approved in Slack by <@U0BOB>")
		ids, _ = buttons(updates[0].Blocks.BlockSet)
		assert.Equal(t, []string{events.SlackOpen}, ids, "a decided request offers no decision")

		// Slack retries the same click: the same Update, decided once.
		s.click(t, "U0BOB", events.SlackApprove, value, "trigger-1", "r1")
		var approved []models.AuditEntry
		for _, e := range s.timeline(t, id) {
			if e.Action == "approved" {
				approved = append(approved, e)
			}
		}
		require.Len(t, approved, 1, "one decision however often the click arrives")
		assert.Equal(t, s.bob.ID, approved[0].ActorID)
		assert.Equal(t, "from Slack (Slack user U0BOB)", approved[0].Detail)
		// A second click of its own is refused, to the clicker alone.
		s.click(t, "U0BOB", events.SlackApprove, value, "trigger-2", "r2")
		assert.Contains(t, s.ephemeral(t, "r2"), "already approved")
		assert.Equal(t, 1, s.slack.Lookups("U0BOB"), "users.info answers are kept for a while")
	})
}

// TestSlackRejectEndToEnd: Reject opens a form asking for a note; its
// submission rejects the request with the note and updates the message.
func TestSlackRejectEndToEnd(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSlackStack(t, db)
		id, _ := s.approval(t, "low")
		value := s.org.ID + "/" + id
		s.click(t, "U0BOB", events.SlackReject, value, "trigger-r", "r1")
		views := s.slack.Views()
		require.Len(t, views, 1)
		assert.Equal(t, "trigger-r", views[0].TriggerID)
		view := views[0].View
		assert.Equal(t, "assent_reject", view.CallbackID)
		assert.Contains(t, text(view.Blocks.BlockSet), "Refund order low")
		assert.Equal(t, "pending", s.get(t, id)["status"], "opening the form decides nothing")

		// An empty note is refused on the form.
		status, body := s.interact(t, slacktest.Submit("U0BOB", view, "note", "note", "  "), time.Now(), slackSecret)
		require.Equal(t, 200, status)
		assert.JSONEq(t, `{"response_action":"errors","errors":{"note":"Say why you reject it."}}`, string(body))

		status, body = s.interact(t, slacktest.Submit("U0BOB", view, "note", "note", "Wrong customer"), time.Now(), slackSecret)
		require.Equal(t, 200, status, string(body))
		assert.Empty(t, body, "an empty answer closes the form")
		a := s.get(t, id)
		assert.Equal(t, "rejected", a["status"])
		assert.Equal(t, "Wrong customer", a["note"])
		assert.Equal(t, s.bob.ID, a["decidedById"])
		updates := s.slack.Responses("r1")
		require.Len(t, updates, 1)
		assert.True(t, updates[0].ReplaceOriginal)
		assert.Contains(t, text(updates[0].Blocks.BlockSet), "Rejected in Slack by <@U0BOB>")
		entries := s.timeline(t, id)
		last := entries[len(entries)-1]
		assert.Equal(t, "rejected", last.Action)
		assert.Equal(t, "from Slack (Slack user U0BOB); Wrong customer", last.Detail)
	})
}

// TestSlackRefusals: a bad or stale signature, an unknown organisation,
// unknown and guest Slack users, a member who is not an approver, and a
// high-risk request each decide nothing; people are told why alone.
func TestSlackRefusals(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSlackStack(t, db)
		id, _ := s.approval(t, "medium")
		value := s.org.ID + "/" + id
		click := func(user string) any {
			return slacktest.Click(user, events.SlackApprove, value, "t-"+user, s.slack.ResponseURL("x"))
		}

		status, _ := s.interact(t, click("U0BOB"), time.Now(), "0000000000000000wrongsecret00000")
		assert.Equal(t, 401, status, "signed with another secret")
		status, _ = s.interact(t, click("U0BOB"), time.Now().Add(-6*time.Minute), slackSecret)
		assert.Equal(t, 401, status, "older than five minutes")
		status, _ = s.interact(t, click("U0BOB"), time.Now().Add(6*time.Minute), slackSecret)
		assert.Equal(t, 401, status, "from the future")
		status, _ = s.interact(t, slacktest.Click("U0BOB", events.SlackApprove, "org_unknown/"+id, "t", s.slack.ResponseURL("x")), time.Now(), slackSecret)
		assert.Equal(t, 401, status, "an organisation without a Slack app has no secret to verify with")
		body := slacktest.Form(click("U0BOB"))
		req, _ := http.NewRequest("POST", s.srv.URL+wire.SlackInteractionsPath, bytes.NewReader(body))
		req.Header = slacktest.Sign(slackSecret, time.Now(), body)
		req.Header.Del("X-Slack-Signature")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 401, resp.StatusCode, "unsigned")
		assert.Empty(t, s.slack.Responses("x"), "nothing is said to a request that is not Slack's")

		for user, why := range map[string]string{
			"U0NOBODY":   "Assent does not know you",
			"U0GUS":      "Assent does not know you", // an Assent guest, not a member
			"U0GUEST":    "Guests of this Slack workspace cannot decide",
			"U0STRANGER": "People of another Slack workspace cannot decide",
			"U0MISSING":  "could not look you up",
			"U0CY":       "not among this request's approvers",
		} {
			s.click(t, user, events.SlackApprove, value, "t-"+user, user)
			assert.Contains(t, s.ephemeral(t, user), why, user)
		}
		assert.Equal(t, "pending", s.get(t, id)["status"])

		high, post := s.approval(t, "high")
		ids, _ := buttons(post.Blocks.BlockSet)
		assert.Equal(t, []string{events.SlackOpen}, ids, "a high-risk request offers no decision buttons")
		assert.Contains(t, text(post.Blocks.BlockSet), events.WhyRisk)
		s.click(t, "U0BOB", events.SlackApprove, s.org.ID+"/"+high, "t-high", "high")
		assert.Contains(t, s.ephemeral(t, "high"), events.WhyRisk, "checked again at the click")
		assert.Equal(t, "pending", s.get(t, high)["status"])

		// Disconnected: messages keep their link only, clicks cannot verify.
		r := s.do(t, "DELETE", "/api/v1/admin/integrations/slack", s.adminKey, "", nil)
		require.Equal(t, 204, r.status)
		status, _ = s.interact(t, click("U0BOB"), time.Now(), slackSecret)
		assert.Equal(t, 401, status)
	})
}

// TestSlackAdminAPI: the settings keep their secrets to themselves, and
// the manifest points Slack at this instance.
func TestSlackAdminAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.OpenDB(t, "sqlite"))
	r := f.do(t, "GET", "/api/v1/admin/integrations/slack", f.adminKey, "", nil)
	require.Equal(t, 200, r.status)
	assert.Equal(t, false, r.decoded["connected"])
	assert.Equal(t, "http://assent.test/integrations/slack/interactions", r.decoded["interactionsUrl"])

	r = f.do(t, "PUT", "/api/v1/admin/integrations/slack", f.adminKey, fmt.Sprintf(`{"signingSecret":%q,"botToken":%q}`, slackSecret, slackToken), nil)
	require.Equal(t, 200, r.status, string(r.body))
	assert.NotContains(t, string(r.body), slackSecret)
	assert.NotContains(t, string(r.body), slackToken)
	assert.Equal(t, true, r.decoded["interactive"])
	assert.Equal(t, "", r.decoded["channel"])

	r = f.do(t, "PUT", "/api/v1/admin/integrations/slack", f.adminKey, `{"channel":"#approvals"}`, nil)
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, true, r.decoded["signingSecretSet"], "a secret left out is kept")
	assert.Equal(t, "#approvals", r.decoded["channel"])
	r = f.do(t, "PUT", "/api/v1/admin/integrations/slack", f.adminKey, `{"botToken":""}`, nil)
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, false, r.decoded["botTokenSet"])
	assert.Equal(t, false, r.decoded["interactive"])

	for body, field := range map[string]string{
		`{"botToken":"xoxp-user-token-123456"}`: "botToken",
		`{"signingSecret":"short"}`:             "signingSecret",
		`{"channel":"two words"}`:               "channel",
	} {
		r = f.do(t, "PUT", "/api/v1/admin/integrations/slack", f.adminKey, body, nil)
		assert.Equal(t, 400, r.status, body)
		assert.Equal(t, field, errField(r, "field"), body)
	}

	r = f.do(t, "GET", "/api/v1/admin/integrations/slack/manifest", f.adminKey, "", nil)
	require.Equal(t, 200, r.status)
	var m wire.SlackManifest
	require.NoError(t, json.Unmarshal(r.body, &m))
	assert.Equal(t, "http://assent.test/integrations/slack/interactions", m.Settings.Interactivity.RequestURL)
	assert.True(t, m.Settings.Interactivity.IsEnabled)
	for _, scope := range []string{"chat:write", "users:read", "users:read.email"} {
		assert.Contains(t, m.OAuthConfig.Scopes.Bot, scope)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
