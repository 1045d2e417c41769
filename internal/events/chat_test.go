package events

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
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
	lines    []string          // Teams' text blocks after the title
	facts    map[string]string // Teams' FactSet
	note     string            // Slack's context, Teams' subtle block
	button   string            // the Open button's label, empty when there is none
	url      string
	primary  bool
	// buttons are every button in order: Slack's, or Teams' actions.
	buttons []shownButton
}

type shownButton struct {
	label, actionID, value, url, style string
	confirm                            bool
}

// Slack's published limits (Block Kit reference: blocks, elements and
// composition objects) that these messages come near.
const (
	slackBlocksMax        = 50
	slackContextElemsMax  = 10
	slackActionsElemsMax  = 25
	slackActionIDMax      = 255
	slackButtonValueMax   = 2000
	slackConfirmTitleMax  = 100
	slackConfirmTextMax   = 300
	slackConfirmButtonMax = 30
)

// decodeSlack checks the message against Block Kit's published shape and
// limits and returns what it shows. The shape check: the blocks decode
// into slack-go's block types, which follow Slack's reference, and encode
// back to the same JSON, so no field is unknown, misspelt or mistyped.
func decodeSlack(t *testing.T, raw []byte) shown {
	t.Helper()
	var msg struct {
		Text   string          `json:"text"`
		Blocks json.RawMessage `json:"blocks"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&msg), "an incoming webhook takes text and blocks")
	var blocks slack.Blocks
	require.NoError(t, json.Unmarshal(msg.Blocks, &blocks))
	again, err := json.Marshal(blocks)
	require.NoError(t, err)
	require.JSONEq(t, string(msg.Blocks), string(again), "every field is one of Block Kit's")
	set := blocks.BlockSet
	require.GreaterOrEqual(t, len(set), 2)
	require.LessOrEqual(t, len(set), slackBlocksMax)

	var s shown
	s.fallback = msg.Text
	assert.NotEmpty(t, s.fallback)
	sec, ok := set[0].(*slack.SectionBlock)
	require.True(t, ok, "the first block is a section, not %T", set[0])
	require.Equal(t, slack.MarkdownType, sec.Text.Type)
	assert.True(t, sec.Text.Verbatim)
	require.NoError(t, sec.Text.Validate())
	s.head = sec.Text.Text
	assert.LessOrEqual(t, width(s.head), slackSectionMax)
	ctx, ok := set[1].(*slack.ContextBlock)
	require.True(t, ok, "the second block is a context, not %T", set[1])
	require.Len(t, ctx.ContextElements.Elements, 1)
	require.LessOrEqual(t, len(ctx.ContextElements.Elements), slackContextElemsMax)
	note, ok := ctx.ContextElements.Elements[0].(*slack.TextBlockObject)
	require.True(t, ok)
	assert.Equal(t, slack.MarkdownType, note.Type)
	s.note = note.Text
	if len(set) == 2 {
		return s
	}
	require.Len(t, set, 3)
	act, ok := set[2].(*slack.ActionBlock)
	require.True(t, ok, "the third block is actions, not %T", set[2])
	require.NotEmpty(t, act.Elements.ElementSet)
	require.LessOrEqual(t, len(act.Elements.ElementSet), slackActionsElemsMax)
	plainText := func(o *slack.TextBlockObject, max int) string {
		require.NotNil(t, o)
		assert.Equal(t, slack.PlainTextType, o.Type)
		assert.LessOrEqual(t, width(o.Text), max)
		assert.NotEmpty(t, o.Text)
		return o.Text
	}
	ids := map[string]bool{}
	for _, e := range act.Elements.ElementSet {
		b, ok := e.(*slack.ButtonBlockElement)
		require.True(t, ok, "only buttons, not %T", e)
		assert.Equal(t, slack.METButton, b.Type)
		label := plainText(b.Text, slackButtonMax)
		require.NotEmpty(t, b.ActionID)
		assert.LessOrEqual(t, len(b.ActionID), slackActionIDMax)
		assert.False(t, ids[b.ActionID], "action ids are unique in a block")
		ids[b.ActionID] = true
		assert.LessOrEqual(t, len(b.Value), slackButtonValueMax)
		assert.LessOrEqual(t, len(b.URL), urlMax)
		assert.Contains(t, []slack.Style{"", slack.StylePrimary, slack.StyleDanger}, b.Style)
		if c := b.Confirm; c != nil {
			plainText(c.Title, slackConfirmTitleMax)
			plainText(c.Text, slackConfirmTextMax)
			plainText(c.Confirm, slackConfirmButtonMax)
			plainText(c.Deny, slackConfirmButtonMax)
		}
		s.buttons = append(s.buttons, shownButton{label: label, actionID: b.ActionID, value: b.Value, url: b.URL, style: string(b.Style), confirm: b.Confirm != nil})
		if b.ActionID == SlackOpen {
			require.NotEmpty(t, b.URL)
			s.button, s.url, s.primary = label, b.URL, b.Style == slack.StylePrimary
		} else {
			assert.Empty(t, b.URL, "a decision button calls back; it links nowhere")
		}
	}
	return s
}

// The Adaptive Card schema's shapes (adaptive-card.json, version 1.4) of
// what these cards use; the decoder refuses any other field.
type (
	cardMessage struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string          `json:"contentType"`
			ContentURL  *string         `json:"contentUrl"`
			Content     json.RawMessage `json:"content"`
		} `json:"attachments"`
	}
	cardShape struct {
		Schema  string            `json:"$schema"`
		Type    string            `json:"type"`
		Version string            `json:"version"`
		Body    []json.RawMessage `json:"body"`
		Actions []cardActionShape `json:"actions"`
	}
	textBlockShape struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Weight   string `json:"weight"`
		Size     string `json:"size"`
		IsSubtle bool   `json:"isSubtle"`
		Wrap     bool   `json:"wrap"`
	}
	factSetShape struct {
		Type  string `json:"type"`
		Facts []struct {
			Title string `json:"title"`
			Value string `json:"value"`
		} `json:"facts"`
	}
	cardActionShape struct {
		Type  string `json:"type"`
		Title string `json:"title"`
		URL   string `json:"url"`
		Style string `json:"style"`
	}
)

// strict decodes raw into v, refusing a field v does not have.
func strict(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v), "%s", raw)
}

// decodeTeams checks the message against the shapes of a Teams workflow
// message and the Adaptive Card schema, and returns what it shows.
func decodeTeams(t *testing.T, raw []byte) shown {
	t.Helper()
	var msg cardMessage
	strict(t, raw, &msg)
	assert.Contains(t, string(raw), `"contentUrl":null`)
	require.Equal(t, "message", msg.Type)
	require.Len(t, msg.Attachments, 1)
	a := msg.Attachments[0]
	assert.Equal(t, "application/vnd.microsoft.card.adaptive", a.ContentType)
	assert.Nil(t, a.ContentURL)
	var card cardShape
	strict(t, a.Content, &card)
	assert.Equal(t, "http://adaptivecards.io/schemas/adaptive-card.json", card.Schema)
	assert.Equal(t, "AdaptiveCard", card.Type)
	assert.Equal(t, "1.4", card.Version)

	var s shown
	var texts []textBlockShape
	for _, raw := range card.Body {
		var kind struct{ Type string }
		require.NoError(t, json.Unmarshal(raw, &kind))
		switch kind.Type {
		case "TextBlock":
			var b textBlockShape
			strict(t, raw, &b)
			assert.NotEmpty(t, b.Text)
			assert.Contains(t, []string{"", "default", "lighter", "bolder"}, b.Weight)
			assert.Contains(t, []string{"", "default", "small", "medium", "large", "extraLarge"}, b.Size)
			assert.True(t, b.Wrap)
			texts = append(texts, b)
		case "FactSet":
			var f factSetShape
			strict(t, raw, &f)
			require.NotEmpty(t, f.Facts)
			s.facts = map[string]string{}
			for _, fact := range f.Facts {
				s.facts[fact.Title] = fact.Value
			}
		default:
			t.Errorf("unexpected body element %q", kind.Type)
		}
	}
	require.GreaterOrEqual(t, len(texts), 2)
	head, last := texts[0], texts[len(texts)-1]
	assert.Equal(t, "bolder", head.Weight)
	assert.Equal(t, "medium", head.Size)
	s.head = head.Text
	assert.True(t, last.IsSubtle)
	assert.Equal(t, "small", last.Size)
	s.note = last.Text
	for i, b := range texts[1 : len(texts)-1] {
		assert.False(t, b.IsSubtle)
		if i == 0 {
			s.title = b.Text
		} else {
			s.lines = append(s.lines, b.Text)
		}
	}
	for _, act := range card.Actions {
		assert.Equal(t, "Action.OpenUrl", act.Type, "a workflow webhook's card cannot call back")
		assert.NotEmpty(t, act.Title)
		u, err := url.Parse(act.URL)
		require.NoError(t, err)
		assert.True(t, u.IsAbs(), "url is a uri")
		assert.Contains(t, []string{"", "default", "positive", "destructive"}, act.Style)
		s.buttons = append(s.buttons, shownButton{label: act.Title, url: act.URL, style: act.Style})
	}
	if n := len(s.buttons); n > 0 {
		s.button, s.url = s.buttons[n-1].label, s.buttons[n-1].url
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
				assert.Len(t, s.buttons, 1, "no decision buttons without the organisation's Slack app")
			},
			teams: func(t *testing.T, s shown) {
				assert.Equal(t, "Approval requested", s.head)
				assert.Equal(t, "Deploy to prod", s.title)
				assert.Equal(t, map[string]string{"Risk": "high", "Status": "pending"}, s.facts)
				assert.Equal(t, []string{WhyRisk}, s.lines, "a high-risk request says why it has no decision buttons")
				assert.Equal(t, "approval.requested · 2026-01-02 02:04 UTC", s.note)
				assert.Equal(t, "Open approval", s.button)
				assert.Equal(t, page, s.url)
			},
		},
		{
			name: "decided approval: plain button, unknown risk ignored",
			body: WebhookBody{Event: ApprovalApproved, SentAt: wiretime.New(sent), Data: json.RawMessage(`{"title":"Refund","risk":"extreme","decidedBy":"ann@example.com","url":"` + page + `"}`)},
			slack: func(t *testing.T, s shown) {
				assert.Equal(t, "*Approved*\nRefund\nby ann@example.com", s.head)
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

// TestChatDecisionButtons: a request that can be settled from chat gets
// Approve and Reject beside Open (Slack: when the organisation's Slack
// app takes clicks, calling back with the approval's id; Teams: links to
// the confirm page of each decision); any other gets Open and a line
// saying why.
func TestChatDecisionButtons(t *testing.T) {
	sent := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const page = "https://assent.example/approvals/apr_1"
	const value = "org_1/apr_1"
	approval := func(kind, extra string) WebhookBody {
		return WebhookBody{Event: kind, SentAt: wiretime.New(sent), Data: json.RawMessage(`{"id":"apr_1","title":"Refund *42*","status":"pending","url":"` + page + `"` + extra + `}`)}
	}
	on := SlackOptions{Interactive: true, Org: "org_1"}
	decides := func(t *testing.T, body WebhookBody) {
		t.Helper()
		raw, err := EncodeWebhookFor(FormatSlack, body, on)
		require.NoError(t, err)
		s := decodeSlack(t, raw)
		require.Len(t, s.buttons, 3)
		assert.Equal(t, shownButton{label: "Approve", actionID: SlackApprove, value: value, style: "primary", confirm: true}, s.buttons[0])
		assert.Equal(t, shownButton{label: "Reject", actionID: SlackReject, value: value, style: "danger"}, s.buttons[1])
		assert.Equal(t, shownButton{label: "Open approval", actionID: SlackOpen, value: value, url: page}, s.buttons[2])
		for _, why := range []string{WhyRisk, WhyConcerns, WhyQuestion} {
			assert.NotContains(t, s.head, why)
		}
		raw, err = EncodeWebhook(FormatTeams, body)
		require.NoError(t, err)
		c := decodeTeams(t, raw)
		require.Len(t, c.buttons, 3)
		assert.Equal(t, shownButton{label: "Approve", url: page + "/decide/approve", style: "positive"}, c.buttons[0])
		assert.Equal(t, shownButton{label: "Reject", url: page + "/decide/reject", style: "destructive"}, c.buttons[1])
		assert.Equal(t, shownButton{label: "Open approval", url: page}, c.buttons[2])
		assert.Empty(t, c.lines)
	}
	openOnly := func(t *testing.T, body WebhookBody, why string) {
		t.Helper()
		raw, err := EncodeWebhookFor(FormatSlack, body, on)
		require.NoError(t, err)
		s := decodeSlack(t, raw)
		require.Len(t, s.buttons, 1)
		assert.Equal(t, SlackOpen, s.buttons[0].actionID)
		assert.Equal(t, value, s.buttons[0].value, "Open's click reaches Assent too, and is checked like the others")
		raw, err = EncodeWebhook(FormatTeams, body)
		require.NoError(t, err)
		c := decodeTeams(t, raw)
		require.Len(t, c.buttons, 1)
		assert.Equal(t, page, c.url)
		if why == "" {
			for _, w := range []string{WhyRisk, WhyConcerns, WhyQuestion} {
				assert.NotContains(t, s.head, w)
				assert.NotContains(t, c.lines, w)
			}
			return
		}
		assert.True(t, strings.HasSuffix(s.head, "\n"+why), s.head)
		assert.Equal(t, []string{why}, c.lines)
	}

	t.Run("low and medium risk", func(t *testing.T) {
		decides(t, approval(ApprovalRequested, `,"risk":"low","concerns":[],"questions":[]`))
		decides(t, approval(ApprovalRequested, `,"risk":"medium"`))
		decides(t, approval(ApprovalEscalated, `,"risk":"medium"`))
		decides(t, approval(ApprovalRequested, `,"risk":"medium","questions":[{"questionId":"q1","answer":"yes"}]`))
	})
	t.Run("high and critical risk", func(t *testing.T) {
		openOnly(t, approval(ApprovalRequested, `,"risk":"high"`), WhyRisk)
		openOnly(t, approval(ApprovalRequested, `,"risk":"critical"`), WhyRisk)
		openOnly(t, approval(ApprovalRequested, `,"risk":"extreme"`), WhyRisk)
	})
	t.Run("an ethics concern", func(t *testing.T) {
		openOnly(t, approval(ApprovalRequested, `,"risk":"low","concerns":[{"principle":"fairness","concern":"x"}]`), WhyConcerns)
	})
	t.Run("a question pending", func(t *testing.T) {
		openOnly(t, approval(ApprovalEscalated, `,"risk":"low","questions":[{"questionId":"q1","answer":null}]`), WhyQuestion)
	})
	t.Run("settled, or not a request to decide", func(t *testing.T) {
		done := approval(ApprovalApproved, `,"risk":"low","decidedBy":"Ann","decidedAt":"2026-01-02T03:05:00.000000Z"`)
		openOnly(t, done, "")
		raw, err := EncodeWebhookFor(FormatSlack, done, on)
		require.NoError(t, err)
		assert.Equal(t, "*Approved* · low risk\nRefund ∗42∗\nby Ann · 2026-01-02 03:05 UTC", decodeSlack(t, raw).head)
		raw, err = EncodeWebhookFor(FormatSlack, approval(ApprovalApproved, `,"risk":"low","decidedBy":"Bob","decidedOnBehalfOf":"Ann","decidedAt":"2026-01-02T03:05:00.000000Z"`), on)
		require.NoError(t, err)
		assert.Equal(t, "*Approved* · low risk\nRefund ∗42∗\nby Bob on behalf of Ann · 2026-01-02 03:05 UTC", decodeSlack(t, raw).head,
			"a delegate decides in their own name, for the person away")
		b := approval(ApprovalRequested, `,"risk":"low"`)
		b.Test = true
		raw, err = EncodeWebhookFor(FormatSlack, b, on)
		require.NoError(t, err)
		assert.Len(t, decodeSlack(t, raw).buttons, 1)
		b = approval(ApprovalRequested, `,"risk":"low"`)
		b.Data = json.RawMessage(strings.Replace(string(b.Data), `"pending"`, `"approved"`, 1))
		openOnly(t, b, "")
	})
	t.Run("without the Slack app, Slack keeps its link", func(t *testing.T) {
		raw, err := EncodeWebhook(FormatSlack, approval(ApprovalRequested, `,"risk":"low"`))
		require.NoError(t, err)
		s := decodeSlack(t, raw)
		require.Len(t, s.buttons, 1)
		assert.True(t, s.primary)
		raw, err = EncodeWebhook(FormatSlack, approval(ApprovalRequested, `,"risk":"high"`))
		require.NoError(t, err)
		assert.NotContains(t, decodeSlack(t, raw).head, WhyRisk, "no reason for buttons nobody could have had")
	})
	t.Run("Teams decides only on the approval's own page", func(t *testing.T) {
		b := approval(ApprovalRequested, `,"risk":"low"`)
		b.Data = json.RawMessage(strings.Replace(string(b.Data), `"id":"apr_1"`, `"id":"apr_2"`, 1))
		raw, err := EncodeWebhook(FormatTeams, b)
		require.NoError(t, err)
		assert.Len(t, decodeTeams(t, raw).buttons, 1)
		assert.Empty(t, TeamsDecideURL(page, "apr_1/../x", "approve"))
		assert.Equal(t, page+"/decide/reject", TeamsDecideURL(page, "apr_1", "reject"))
	})
	t.Run("Teams names the delegate and the person away", func(t *testing.T) {
		raw, err := EncodeWebhook(FormatTeams, approval(ApprovalRejected, `,"risk":"low","decidedBy":"Bob","decidedOnBehalfOf":"Ann *Ops*","decidedAt":"2026-01-02T03:05:00.000000Z"`))
		require.NoError(t, err)
		s := decodeTeams(t, raw)
		assert.Equal(t, `Refund \*42\*`, s.title)
		assert.Equal(t, []string{`by Bob on behalf of Ann \*Ops\* · 2026-01-02 03:05 UTC`}, s.lines,
			"a delegate decides in their own name, for the person away, escaped as Teams needs")
		assert.Len(t, s.buttons, 1, "a decided approval has only its link")
		raw, err = EncodeWebhook(FormatTeams, approval(ApprovalApproved, `,"risk":"low","decidedBy":"Ann","decidedAt":"2026-01-02T03:05:00.000000Z"`))
		require.NoError(t, err)
		assert.Equal(t, []string{"by Ann · 2026-01-02 03:05 UTC"}, decodeTeams(t, raw).lines)
	})
}

func TestButtonValue(t *testing.T) {
	org, id, ok := ParseButtonValue(ButtonValue("org_1", "apr_2"))
	assert.True(t, ok)
	assert.Equal(t, "org_1", org)
	assert.Equal(t, "apr_2", id)
	for _, bad := range []string{"", "org_1", "/apr_1", "org_1/"} {
		_, _, ok := ParseButtonValue(bad)
		assert.False(t, ok, bad)
	}
}
