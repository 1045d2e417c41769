package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/wiretime"
)

func TestChatKindsCoverCatalogue(t *testing.T) {
	for _, kind := range Kinds() {
		k, ok := chatKinds[kind]
		if assert.True(t, ok, "no chat headline for %s", kind) {
			assert.NotEmpty(t, k.headline, kind)
			assert.NotEmpty(t, k.button, kind)
			assert.LessOrEqual(t, width(k.button), slackButtonMax, kind)
		}
	}
	assert.Len(t, chatKinds, len(Kinds()), "a headline for a kind that is not in the catalogue")
}

func TestEncodeWebhookJSONUnchanged(t *testing.T) {
	sent := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, b := range []WebhookBody{
		{Event: ApprovalRequested, SentAt: wiretime.New(sent), Data: json.RawMessage(`{"id":"apr_1","title":"<b>*x*</b>"}`)},
		{Event: ApprovalApproved, SentAt: wiretime.New(sent), Test: true},
	} {
		want, err := json.Marshal(b)
		require.NoError(t, err)
		got, err := EncodeWebhook(FormatJSON, b)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := EncodeWebhook("email", WebhookBody{Event: ApprovalRequested})
	assert.Error(t, err)
}

// shown is what a chat message displays, decoded from either format so
// that one table can check both.
type shown struct {
	fallback string            // Slack's notification text
	head     string            // Slack: the section text; Teams: the headline block
	title    string            // Teams' title block (in Slack it is part of head)
	facts    map[string]string // Teams' FactSet
	note     string            // Slack's context, Teams' subtle block
	button   string            // label, empty when there is no button
	url      string
	primary  bool
}

// decodeSlack checks the Block Kit structure and returns what it shows.
func decodeSlack(t *testing.T, raw []byte) shown {
	t.Helper()
	type text struct{ Type, Text string }
	var msg struct {
		Text   string
		Blocks []struct {
			Type     string
			Text     text
			Elements []json.RawMessage
		}
	}
	require.NoError(t, json.Unmarshal(raw, &msg))
	require.GreaterOrEqual(t, len(msg.Blocks), 2)
	var s shown
	s.fallback = msg.Text
	assert.NotEmpty(t, s.fallback)
	sec, ctx := msg.Blocks[0], msg.Blocks[1]
	require.Equal(t, "section", sec.Type)
	require.Equal(t, "mrkdwn", sec.Text.Type)
	s.head = sec.Text.Text
	assert.LessOrEqual(t, width(s.head), slackSectionMax)
	require.Equal(t, "context", ctx.Type)
	require.Len(t, ctx.Elements, 1)
	var note text
	require.NoError(t, json.Unmarshal(ctx.Elements[0], &note))
	assert.Equal(t, "mrkdwn", note.Type)
	s.note = note.Text
	if len(msg.Blocks) == 2 {
		return s
	}
	require.Len(t, msg.Blocks, 3)
	act := msg.Blocks[2]
	require.Equal(t, "actions", act.Type)
	require.Len(t, act.Elements, 1)
	var button struct {
		Type, URL, Style string
		Text             text
	}
	require.NoError(t, json.Unmarshal(act.Elements[0], &button))
	assert.Equal(t, "button", button.Type)
	assert.Equal(t, "plain_text", button.Text.Type)
	assert.LessOrEqual(t, width(button.Text.Text), slackButtonMax)
	assert.LessOrEqual(t, len(button.URL), urlMax)
	require.NotEmpty(t, button.URL)
	assert.Contains(t, []string{"", "primary"}, button.Style)
	s.button, s.url, s.primary = button.Text.Text, button.URL, button.Style == "primary"
	return s
}

// decodeTeams checks the Adaptive Card message structure and returns what
// it shows.
func decodeTeams(t *testing.T, raw []byte) shown {
	t.Helper()
	var msg struct {
		Type        string
		Attachments []struct {
			ContentType string
			ContentURL  *string `json:"contentUrl"`
			Content     struct {
				Schema        string `json:"$schema"`
				Type, Version string
				Body          []struct {
					Type, Text, Weight, Size string
					IsSubtle, Wrap           bool
					Facts                    []struct{ Title, Value string }
				}
				Actions []struct{ Type, Title, URL string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(raw, &msg))
	assert.Contains(t, string(raw), `"contentUrl":null`)
	require.Equal(t, "message", msg.Type)
	require.Len(t, msg.Attachments, 1)
	a := msg.Attachments[0]
	assert.Equal(t, "application/vnd.microsoft.card.adaptive", a.ContentType)
	assert.Nil(t, a.ContentURL)
	card := a.Content
	assert.Equal(t, "http://adaptivecards.io/schemas/adaptive-card.json", card.Schema)
	assert.Equal(t, "AdaptiveCard", card.Type)
	assert.Equal(t, "1.4", card.Version)

	var s shown
	body := card.Body
	require.GreaterOrEqual(t, len(body), 2)
	head, last := body[0], body[len(body)-1]
	assert.Equal(t, "TextBlock", head.Type)
	assert.Equal(t, "bolder", head.Weight)
	assert.Equal(t, "medium", head.Size)
	assert.True(t, head.Wrap)
	s.head = head.Text
	assert.Equal(t, "TextBlock", last.Type)
	assert.True(t, last.IsSubtle)
	assert.Equal(t, "small", last.Size)
	s.note = last.Text
	for _, b := range body[1 : len(body)-1] {
		switch b.Type {
		case "TextBlock":
			assert.True(t, b.Wrap)
			s.title = b.Text
		case "FactSet":
			s.facts = map[string]string{}
			for _, f := range b.Facts {
				s.facts[f.Title] = f.Value
			}
		default:
			t.Errorf("unexpected body element %q", b.Type)
		}
	}
	if len(card.Actions) > 0 {
		require.Len(t, card.Actions, 1)
		assert.Equal(t, "Action.OpenUrl", card.Actions[0].Type)
		s.button, s.url = card.Actions[0].Title, card.Actions[0].URL
	}
	return s
}

func TestChatFormats(t *testing.T) {
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	const page = "https://assent.example/approvals/apr_1"
	approval := func(data string) WebhookBody {
		return WebhookBody{Event: ApprovalRequested, SentAt: wiretime.New(sent), Data: json.RawMessage(data)}
	}
	long := strings.Repeat("é", 5000)
	cases := []struct {
		name  string
		body  WebhookBody
		slack func(t *testing.T, s shown)
		teams func(t *testing.T, s shown)
	}{
		{
			name: "approval requested",
			body: approval(`{"id":"apr_1","title":"Deploy to prod","risk":"high","status":"pending","url":"` + page + `"}`),
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Approval requested* · high risk\nDeploy to prod", s.head)
				assert.Equal(t, "Approval requested: Deploy to prod", s.fallback)
				assert.Equal(t, "approval.requested · 2026-01-02 02:04 UTC", s.note)
				assert.Equal(t, "Open approval", s.button)
				assert.Equal(t, page, s.url)
				assert.True(t, s.primary)
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "Approval requested", s.head)
				assert.Equal(t, "Deploy to prod", s.title)
				assert.Equal(t, map[string]string{"Risk": "high", "Status": "pending"}, s.facts)
				assert.Equal(t, "approval.requested · 2026-01-02 02:04 UTC", s.note)
				assert.Equal(t, "Open approval", s.button)
				assert.Equal(t, page, s.url)
			},
		},
		{
			name: "decided approval: plain button, unknown risk ignored",
			body: WebhookBody{Event: ApprovalApproved, SentAt: wiretime.New(sent), Data: json.RawMessage(`{"title":"Refund","risk":"extreme","decidedBy":"ann@example.com","url":"` + page + `"}`)},
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Approved*\nRefund", s.head)
				assert.Equal(t, page, s.url)
				assert.False(t, s.primary)
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "Approved", s.head)
				assert.Nil(t, s.facts)
				assert.Equal(t, page, s.url)
			},
		},
		{
			name:  "no url: no button",
			body:  approval(`{"title":"Deploy"}`),
			slack: func(t *testing.T, s shown) { assert.Empty(t, s.button) },
			teams: func(t *testing.T, s shown) { assert.Empty(t, s.button) },
		},
		{
			name:  "javascript url: no button",
			body:  approval(`{"title":"Deploy","url":"javascript:alert(1)"}`),
			slack: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
			teams: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
		},
		{
			name:  "javascript url with a host: no button",
			body:  approval(`{"title":"Deploy","url":"javascript://assent.example/%0Aalert(1)"}`),
			slack: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
			teams: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
		},
		{
			name:  "relative url: no button",
			body:  approval(`{"title":"Deploy","url":"/approvals/apr_1"}`),
			slack: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
			teams: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
		},
		{
			name:  "overlong url: dropped, not cut",
			body:  approval(`{"title":"Deploy","url":"https://assent.example/` + strings.Repeat("a", urlMax) + `"}`),
			slack: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
			teams: func(t *testing.T, s shown) { assert.Empty(t, s.url) },
		},
		{
			name: "no data",
			body: WebhookBody{Event: ApprovalRequested, SentAt: wiretime.New(sent)},
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Approval requested*", s.head)
				assert.Equal(t, "Approval requested", s.fallback)
				assert.Empty(t, s.button)
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "Approval requested", s.head)
				assert.Empty(t, s.title)
				assert.Empty(t, s.button)
			},
		},
		{
			name: "fields of the wrong type",
			body: approval(`{"title":7,"risk":["high"],"url":{"href":"https://x"}}`),
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Approval requested*", s.head)
				assert.Empty(t, s.button)
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "Approval requested", s.head)
				assert.Empty(t, s.title)
				assert.Nil(t, s.facts)
			},
		},
		{
			name: "test delivery",
			body: WebhookBody{Event: ReviewRequested, SentAt: wiretime.New(sent), Test: true,
				Data: json.RawMessage(`{"message":"A test delivery from Assent.","url":"https://assent.example"}`)},
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Review requested*\nA test delivery from Assent.", s.head)
				assert.Equal(t, "[Test] Review requested: A test delivery from Assent.", s.fallback)
				assert.Equal(t, "Test delivery from Assent · review.requested · 2026-01-02 02:04 UTC", s.note)
				assert.Equal(t, "Open Assent", s.button)
				assert.Equal(t, "https://assent.example", s.url)
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "A test delivery from Assent.", s.title)
				assert.True(t, strings.HasPrefix(s.note, "Test delivery from Assent · "), s.note)
				assert.Equal(t, "Open Assent", s.button)
			},
		},
		{
			name: "hostile title",
			body: approval(`{"title":"<script>alert(1)</script> <https://evil|click> *bold* <!channel>","status":"[x](https://evil)","url":"` + page + `"}`),
			slack: func(t *testing.T, s shown) {
				for _, out := range []string{s.head, s.fallback} {
					assert.NotContains(t, out, "<")
					assert.NotContains(t, out, "*bold*")
					assert.Contains(t, out, "&lt;script&gt;alert(1)&lt;/script&gt; &lt;https://evil|click&gt; ∗bold∗ &lt;!channel&gt;")
				}
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, `\<script\>alert\(1\)\</script\> \<https://evil|click\> \*bold\* \<!channel\>`, s.title)
				assert.Equal(t, `\[x\]\(https://evil\)`, s.facts["Status"])
			},
		},
		{
			name: "overlong title is cut",
			body: approval(`{"title":"` + long + `","url":"` + page + `"}`),
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, slackSectionMax, width(s.head))
				assert.True(t, strings.HasSuffix(s.head, "é…"), "cut with an ellipsis")
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, teamsTitleMax, width(s.title))
				assert.True(t, strings.HasSuffix(s.title, "é…"))
			},
		},
		{
			name: "a cut never splits an escape",
			body: approval(`{"title":"` + strings.Repeat("&*", 3000) + `"}`),
			slack: func(t *testing.T, s shown) {
				assert.LessOrEqual(t, width(s.head), slackSectionMax)
				assert.True(t, strings.HasSuffix(s.head, "&amp;…") || strings.HasSuffix(s.head, "∗…"), s.head[len(s.head)-20:])
			},
			teams: func(t *testing.T, s shown) {
				assert.LessOrEqual(t, width(s.title), teamsTitleMax)
				assert.True(t, strings.HasSuffix(s.title, `\*…`) || strings.HasSuffix(s.title, "&…"))
			},
		},
		{
			name: "not a catalogue kind",
			body: WebhookBody{Event: "thing.*happened*", Data: json.RawMessage(`{}`)},
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*thing.∗happened∗*", s.head)
				assert.Equal(t, "thing.∗happened∗", s.note, "no time when sentAt is unset")
			},
			teams: func(t *testing.T, s shown) { assert.Equal(t, `thing.\*happened\*`, s.head) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := EncodeWebhook(FormatSlack, tc.body)
			require.NoError(t, err)
			t.Run("slack", func(t *testing.T) { tc.slack(t, decodeSlack(t, raw)) })
			raw, err = EncodeWebhook(FormatTeams, tc.body)
			require.NoError(t, err)
			t.Run("teams", func(t *testing.T) { tc.teams(t, decodeTeams(t, raw)) })
		})
	}
}

func TestTeamsEscapeLeadingListMarker(t *testing.T) {
	assert.Equal(t, `\- a - b`, clip("- a - b", 100, teamsEscape))
	assert.Equal(t, `\+1`, clip("+1", 100, teamsEscape))
}
