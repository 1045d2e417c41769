package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/slack-go/slack"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/browsertest"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/slacktest"
	"github.com/assent-hq/assent/wire"
)

// TestBrowserSlack is issue 22's chat "done when" on assent dev, with a
// fake Slack (ASSENT_SLACK_API_URL): an agent creates a medium-risk
// approval; the message reaches the Slack channel with Approve, Reject
// and Open; a signed click from a member's Slack user approves it as
// proposed; the agent's long-poll returns approved, decided by that
// member; and the fake Slack sees the message updated. Then, in the
// browser, a Teams card's Approve opens the confirm page that decides with
// one more click.
func TestBrowserSlack(t *testing.T) {
	browsertest.Require(t)
	const secret, token = "8f742231b10e8888abcd99yyyzzz85a5", "xoxb-1234-5678-abcdefghijkl"
	fake := slacktest.New(token)
	defer fake.Close()
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	t.Setenv("ASSENT_SLACK_API_URL", fake.APIURL())
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()

	var app map[string]any
	require.Equal(t, 200, sendJSON(t, "PUT", apiURL+"/api/v1/admin/integrations/slack", boot.AdminKey,
		fmt.Sprintf(`{"signingSecret":%q,"botToken":%q,"channel":"C0APPROVALS"}`, secret, token), &app), "%v", app)
	assert.Equal(t, true, app["interactive"])
	var manifest wire.SlackManifest
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/admin/integrations/slack/manifest", boot.AdminKey, &manifest))
	assert.Equal(t, apiURL+"/integrations/slack/interactions", manifest.Settings.Interactivity.RequestURL)
	fake.AddUser("U0ADAM", admin.Email, false)
	var hook map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/admin/webhooks", boot.AdminKey,
		fmt.Sprintf(`{"url":%q,"format":"teams","events":["approval.requested"]}`, fake.HookURL("teams")), &hook), "%v", hook)

	create := func(title string) string {
		var a map[string]any
		require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":%q,"risk":"medium",
			"approvers":[%q],"input":{"amount":120,"currency":"EUR"},"editableFields":["amount"]}`, title, admin.Email), &a), "%v", a)
		return a["id"].(string)
	}

	// 1. The message reaches the channel with Approve, Reject and Open.
	id := create("Refund order 42")
	var post slacktest.Post
	require.Eventually(t, func() bool {
		for _, p := range fake.Posts() {
			if strings.Contains(p.Text, "Refund order 42") {
				post = p
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the approval never reached the Slack channel")
	assert.Equal(t, "C0APPROVALS", post.Channel)
	var labels []string
	var value string
	for _, b := range post.Blocks.BlockSet {
		if act, ok := b.(*slack.ActionBlock); ok {
			for _, e := range act.Elements.ElementSet {
				btn := e.(*slack.ButtonBlockElement)
				labels, value = append(labels, btn.Text.Text), btn.Value
			}
		}
	}
	require.Equal(t, []string{"Approve", "Reject", "Open approval"}, labels)
	assert.Equal(t, boot.OrganizationID+"/"+id, value)

	// 2. The agent waits; a member's signed click approves as proposed.
	type outcome struct {
		Status, DecidedBy, DecidedByID string
		ApprovedInput                  json.RawMessage
	}
	polled, endPoll := longPoll[outcome](t, apiURL+"/api/v1/approvals/"+id+"?wait=60s", boot.AgentKey)
	defer endPoll()
	time.Sleep(200 * time.Millisecond) // the long-poll is waiting
	body := slacktest.Form(slacktest.Click("U0ADAM", events.SlackApprove, value, "trigger-1", fake.ResponseURL("r1")))
	req, err := http.NewRequest("POST", apiURL+wire.SlackInteractionsPath, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = slacktest.Sign(secret, time.Now(), body)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	got := polled()
	assert.Equal(t, "approved", got.Status)
	assert.Equal(t, admin.Name, got.DecidedBy)
	assert.Equal(t, admin.ID, got.DecidedByID)
	assert.JSONEq(t, `{"amount":120,"currency":"EUR"}`, string(got.ApprovedInput), "as proposed")

	// 3. The fake Slack saw the message updated in place.
	updates := fake.Responses("r1")
	require.Len(t, updates, 1)
	assert.True(t, updates[0].ReplaceOriginal)
	shown, err := json.Marshal(updates[0].Blocks)
	require.NoError(t, err)
	assert.Contains(t, string(shown), "Approved in Slack by \\u003c@U0ADAM\\u003e")
	assert.Contains(t, string(shown), "by "+admin.Name)

	// 4. A Teams card's Approve opens the confirm page; one click decides.
	second := create("Refund order 43")
	var approveURL string
	require.Eventually(t, func() bool {
		for _, raw := range fake.Hooked("teams") {
			if !bytes.Contains(raw, []byte(second)) {
				continue
			}
			var msg struct {
				Attachments []struct {
					Content struct {
						Actions []struct{ Type, Title, URL string }
					}
				}
			}
			require.NoError(t, json.Unmarshal(raw, &msg))
			for _, a := range msg.Attachments[0].Content.Actions {
				if a.Title == "Approve" {
					approveURL = a.URL
				}
			}
			return true
		}
		return false
	}, 30*time.Second, 50*time.Millisecond, "the Teams card never arrived")
	require.Equal(t, apiURL+"/approvals/"+second+"/decide/approve", approveURL)

	b := browsertest.New(t)
	b.Navigate(approveURL)
	assert.Contains(t, b.Location(), "/signin?next=", "the confirm page needs a signed-in person")
	signInFromDevMail(t, b, apiURL, admin.Email)

	// The admin page shows the app without its secrets, and the manifest.
	b.Navigate(apiURL + "/admin/slack")
	page := b.Text("main")
	assert.Contains(t, page, "Decision buttons")
	assert.Contains(t, page, apiURL+"/integrations/slack/interactions")
	assert.Contains(t, page, "users:read.email")
	assert.NotContains(t, page, secret)
	assert.NotContains(t, page, token)
	b.CheckAccessibility("admin Slack page")
	b.Run(chromedp.SetValue(chromedp.CSS("#channel"), "C0OTHER"))
	b.ClickAndWait(`form[action="/admin/slack"] button[type="submit"]`)
	assert.Contains(t, b.Text(".notice"), "Secrets are kept sealed")
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/admin/integrations/slack", boot.AdminKey, &app))
	assert.Equal(t, "C0OTHER", app["channel"])
	assert.Equal(t, true, app["interactive"], "secret fields left empty keep the secrets")

	b.Navigate(approveURL)
	assert.Contains(t, b.Text("#confirm-h"), "Approve as proposed?")
	b.CheckAccessibility("confirm page")
	b.ClickAndWait(`.confirm-decision button[value="approve"]`)
	assert.True(t, strings.HasSuffix(b.Location(), "/approvals/"+second), b.Location())
	assert.Contains(t, b.Text(".settled"), "By "+admin.Name)
	var again struct{ Status, DecidedBy string }
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/approvals/"+second, boot.AgentKey, &again))
	assert.Equal(t, "approved", again.Status)
	assert.Equal(t, admin.Name, again.DecidedBy)
}

// sendJSON sends body with method and key and decodes the answer.
func sendJSON(t *testing.T, method, url, key, body string, into any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
	return resp.StatusCode
}
