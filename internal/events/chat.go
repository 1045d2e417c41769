package events

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/slack-go/slack"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/wiretime"
)

// The slack and teams formats post a native chat message instead of the
// JSON envelope: a headline for the event kind, the subject's
// title and a button to its page. Everything shown is read leniently from
// the event's data, because each kind carries a different object.

// chatKind is how a chat message presents one event kind.
type chatKind struct {
	headline string // the bold first line
	button   string // label of the button to the subject's page
	act      bool   // the event asks someone to act: Slack shows a primary button
}

// chatKinds covers every kind in the catalogue (a test checks), so a new
// kind cannot go out with a bare name for a headline.
var chatKinds = map[string]chatKind{
	ApprovalRequested:      {"Approval requested", "Open approval", true},
	ApprovalApproved:       {"Approved", "Open approval", false},
	ApprovalRejected:       {"Rejected", "Open approval", false},
	ApprovalExpired:        {"Approval expired", "Open approval", false},
	ApprovalEscalated:      {"Approval escalated", "Open approval", true}, // new approvers must act
	ApprovalQuestion:       {"Question asked", "Open approval", false},
	ApprovalAnswered:       {"Question answered", "Open approval", false},
	ReviewRequested:        {"Review requested", "Open review", true},
	ReviewApproved:         {"Review approved", "Open review", false},
	ReviewChangesRequested: {"Changes requested", "Open review", false},
	ReviewExpired:          {"Review expired", "Open review", false},
	CollectionRequested:    {"Collection requested", "Open", true},
	CollectionCompleted:    {"Collection completed", "Open", false},
	CollectionExpired:      {"Collection expired", "Open", false},
	FlowCompleted:          {"Flow completed", "Open flow", false},
	GateDenied:             {"Gate denied", "Open", false},
	ReportPublished:        {"Report published", "Open report", false},
	ReportUpdated:          {"Report updated", "Open report", false},
	ReportShared:           {"Report shared", "Open report", false},
	ReportViewed:           {"Report viewed", "Open report", false},
	CommentCreated:         {"New comment", "Open", false},
	AccessRequested:        {"Access requested", "Open", true},
	ScheduleDue:            {"Schedule due", "Open", false},
	PublishHeld:            {"Publishing held", "Open", false},
	ExecutionMismatch:      {"What ran is not what was approved", "Open", false},
	MandateGranted:         {"Mandate granted", "Open mandates", false},
	MandateRevoked:         {"Mandate revoked", "Open mandates", false},
	MandateExhausted:       {"Mandate spent for now", "Open mandates", false},
	WebhookTest:            {"Test delivery", "Open Assent", false},
}

// Limits. Slack rejects the whole message when a block is over its limit,
// so text is cut with "…"; a URL is dropped instead, since a cut one leads
// somewhere else.
const (
	slackSectionMax = 3000 // section text
	slackButtonMax  = 75   // button text
	urlMax          = 3000 // button url (Slack); Teams gets the same rule
	teamsTitleMax   = 2000 // keeps a card far below Teams' 28 KB message limit
	statusMax       = 100
	testNote        = "Test delivery from Assent"
)

var risks = []string{"low", "medium", "high", "critical"}

// chatView is what both chat formats show. Fields are raw user text, one
// line each; every renderer escapes them for its own markup.
type chatView struct {
	kind   chatKind
	event  string
	id     string // the subject's id, as its data says
	title  string // the data's title, else a test's message
	risk   string // one of risks, or empty
	status string
	url    string // absolute http(s), or empty: no button
	when   string // sentAt in UTC, or empty
	test   bool
	// decided says who settled the request and when, for a decided
	// approval's message.
	decided string
	// ask is set for an approval that asks its approvers to act (still
	// pending): settle says whether chat's Approve and Reject may settle
	// it, and why not when they may not.
	ask    bool
	settle bool
	why    string
}

// Settling from chat: chat's buttons approve as
// proposed, so they are offered only for a request that needs nothing
// more than a click. These are the reasons a message gives when it offers
// only Open.
const (
	WhyRisk     = "High and critical risk requests are decided on their page."
	WhyConcerns = "An ethics rule matched: approving needs a written reason, given on the page."
	WhyQuestion = "A question waits for the requester's answer; nobody can decide until it is answered."
)

// ChatSettle says whether an approval may be settled from a chat message:
// low or medium risk, no ethics concern (which makes approving need a
// written reason) and no question waiting for its answer. When it may
// not, why says so in one line for the message.
func ChatSettle(risk string, concerns int, questionPending bool) (ok bool, why string) {
	switch {
	case risk != "low" && risk != "medium":
		return false, WhyRisk
	case concerns > 0:
		return false, WhyConcerns
	case questionPending:
		return false, WhyQuestion
	}
	return true, ""
}

// asksApprovers are the approval events whose message asks approvers to
// decide.
var asksApprovers = []string{ApprovalRequested, ApprovalEscalated}

func newChatView(b WebhookBody) chatView {
	var data map[string]json.RawMessage
	_ = json.Unmarshal(b.Data, &data) // not an object: no fields
	field := func(key string) string {
		var s string
		_ = json.Unmarshal(data[key], &s) // absent or not a string: ""
		return strings.Join(strings.Fields(s), " ")
	}
	v := chatView{event: b.Event, id: field("id"), title: field("title"), status: field("status"), url: pageURL(field("url")), test: b.Test}
	if v.title == "" {
		v.title = field("message")
	}
	if r := field("risk"); slices.Contains(risks, r) {
		v.risk = r
	}
	if !b.SentAt.IsZero() {
		v.when = b.SentAt.Time().Format(chatTime)
	}
	var ok bool
	if v.kind, ok = chatKinds[b.Event]; !ok {
		v.kind = chatKind{headline: b.Event, button: "Open"}
	}
	if b.Test {
		v.kind.button = "Open Assent" // a test links to the base URL, not a subject
	}
	if b.Test {
		return v
	}
	switch {
	case slices.Contains(asksApprovers, b.Event) && v.status == "pending" && v.id != "" && v.url != "":
		var concerns []json.RawMessage
		_ = json.Unmarshal(data["concerns"], &concerns)
		var questions []struct {
			Answer json.RawMessage `json:"answer"`
		}
		_ = json.Unmarshal(data["questions"], &questions)
		pending := slices.ContainsFunc(questions, func(q struct {
			Answer json.RawMessage `json:"answer"`
		}) bool {
			return len(q.Answer) == 0 || string(q.Answer) == "null"
		})
		v.ask = true
		v.settle, v.why = ChatSettle(v.risk, len(concerns), pending)
	case b.Event == ApprovalApproved || b.Event == ApprovalRejected:
		if by := field("decidedBy"); by != "" {
			v.decided = "by " + by
			if away := field("decidedOnBehalfOf"); away != "" {
				v.decided += " on behalf of " + away
			}
			var at wiretime.Time
			if json.Unmarshal(data["decidedAt"], &at) == nil && !at.IsZero() {
				v.decided += " · " + at.Time().Format(chatTime)
			}
		}
	}
	return v
}

// chatTime is how chat messages show a time.
const chatTime = "2006-01-02 15:04 UTC"

// pageURL returns raw if it is an absolute http(s) URL within urlMax, else
// "" (javascript:, relative, too long). It is re-encoded so that a stray
// space cannot make Slack refuse the message.
func pageURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	if s := u.String(); len(s) <= urlMax {
		return s
	}
	return ""
}

// note is the small print: test marker, event kind and time. A catalogue
// kind is plain [a-z._] and shown as is; anything else is escaped.
func (v chatView) note(esc func(r rune, first bool) string) string {
	var parts []string
	if v.test {
		parts = append(parts, testNote)
	}
	kind := v.event
	if !Valid(kind) {
		kind = clip(kind, 100, esc)
	}
	parts = append(parts, kind)
	if v.when != "" {
		parts = append(parts, v.when)
	}
	return strings.Join(parts, " · ")
}

// clip escapes s rune by rune with esc and cuts the result to max UTF-16
// units, ending in "…" when cut. Counting escaped pieces means a cut never
// splits an entity or an escape pair; UTF-16 units (how Slack, in
// JavaScript, counts) are never fewer than runes.
func clip(s string, max int, esc func(r rune, first bool) string) string {
	var pieces []string
	total := 0
	for i, r := range s {
		p := esc(r, i == 0)
		pieces = append(pieces, p)
		total += width(p)
	}
	if total <= max {
		return strings.Join(pieces, "")
	}
	var out strings.Builder
	n := 0
	for _, p := range pieces {
		if n+width(p) > max-1 { // room for the "…"
			break
		}
		out.WriteString(p)
		n += width(p)
	}
	return out.String() + "…"
}

func width(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Slack: Block Kit, built with slack-go's types, which follow Slack's
// published block reference. The same blocks go to an incoming webhook
// (a slack-format endpoint) and to chat.postMessage (the organisation's
// Slack app).

// Slack's action ids on an approval's buttons; their value is
// ButtonValue.
const (
	SlackApprove = "approve"
	SlackReject  = "reject"
	SlackOpen    = "open"
)

// SlackOptions say what an organisation's Slack messages may carry.
type SlackOptions struct {
	// Interactive is set when the organisation's Slack app takes clicks
	// (its signing secret and bot token are set): a request that can be
	// settled from chat then gets Approve and Reject beside Open, and one
	// that cannot says why.
	Interactive bool
	// Org is the organisation's id, which the buttons' value carries.
	Org string
}

// ButtonValue is the value of an approval message's buttons: which
// organisation and approval a click is about. It is no secret: the click
// is trusted for its Slack signature, checked with the organisation's
// signing secret, and this value only says which secret to check with.
func ButtonValue(org, approvalID string) string { return org + "/" + approvalID }

// ParseButtonValue reads ButtonValue.
func ParseButtonValue(v string) (org, approvalID string, ok bool) {
	org, approvalID, ok = strings.Cut(v, "/")
	return org, approvalID, ok && org != "" && approvalID != ""
}

// slackEscape makes user text literal in Slack mrkdwn. &, < and > become
// entities, Slack's own rule, which also stops <url|text> links and
// <!channel> mentions. Slack has no escape for its formatting marks, so
// *, _, ~ and ` become look-alike characters rather than make a title
// bold, italic, struck or code.
func slackEscape(r rune, _ bool) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '*':
		return "\u2217" // asterisk operator
	case '_':
		return "\u02cd" // modifier letter low macron
	case '~':
		return "\u223c" // tilde operator
	case '`':
		return "\u02cb" // modifier letter grave accent
	}
	return string(r)
}

func mrkdwn(text string) *slack.TextBlockObject {
	// Verbatim stops Slack linking bare URLs and channel names in user text.
	return &slack.TextBlockObject{Type: slack.MarkdownType, Text: text, Verbatim: true}
}

func plain(text string) *slack.TextBlockObject {
	return &slack.TextBlockObject{Type: slack.PlainTextType, Text: clip(text, slackButtonMax, keep)}
}

// SlackMessage is b as a Slack message: the notification text (also the
// fallback where blocks are not shown) and the blocks.
func SlackMessage(b WebhookBody, o SlackOptions) (string, []slack.Block) {
	v := newChatView(b)
	head := clip(v.kind.headline, 200, slackEscape)
	text := "*" + head + "*"
	if v.risk != "" {
		text += " · " + v.risk + " risk"
	}
	fallback := head
	if v.test {
		fallback = "[Test] " + fallback
	}
	var tail string
	if v.decided != "" {
		tail = "\n" + clip(v.decided, 300, slackEscape)
	}
	decide := o.Interactive && v.ask && v.settle && o.Org != ""
	if o.Interactive && v.ask && !v.settle {
		tail += "\n" + v.why // ours, plain words: nothing to escape
	}
	if v.title != "" {
		title := clip(v.title, slackSectionMax-width(text)-width(tail)-1, slackEscape)
		text += "\n" + title
		fallback += ": " + title
	}
	text += tail
	blocks := []slack.Block{
		slack.NewSectionBlock(mrkdwn(text), nil, nil),
		slack.NewContextBlock("", mrkdwn(v.note(slackEscape))),
	}
	if v.url == "" {
		return fallback, blocks
	}
	value := ""
	if v.id != "" && o.Org != "" {
		value = ButtonValue(o.Org, v.id)
	}
	open := &slack.ButtonBlockElement{Type: slack.METButton, Text: plain(v.kind.button), ActionID: SlackOpen, URL: v.url, Value: value}
	var buttons []slack.BlockElement
	if decide {
		approve := &slack.ButtonBlockElement{Type: slack.METButton, Text: plain("Approve"), ActionID: SlackApprove, Value: value, Style: slack.StylePrimary,
			Confirm: &slack.ConfirmationBlockObject{Title: plain("Approve as proposed?"),
				Text:    &slack.TextBlockObject{Type: slack.PlainTextType, Text: clip(v.title, 200, keep) + " will be approved as the agent proposed it, in your name."},
				Confirm: plain("Approve"), Deny: plain("Cancel")}}
		reject := &slack.ButtonBlockElement{Type: slack.METButton, Text: plain("Reject"), ActionID: SlackReject, Value: value, Style: slack.StyleDanger}
		buttons = append(buttons, approve, reject)
	} else if v.kind.act {
		open.Style = slack.StylePrimary
	}
	buttons = append(buttons, open)
	return fallback, append(blocks, slack.NewActionBlock("", buttons...))
}

// slackMessage is the body of an incoming webhook.
type slackMessage struct {
	Text   string       `json:"text"`
	Blocks slack.Blocks `json:"blocks"`
}

func encodeSlack(b WebhookBody, o SlackOptions) ([]byte, error) {
	text, blocks := SlackMessage(b, o)
	return json.Marshal(slackMessage{Text: text, Blocks: slack.Blocks{BlockSet: blocks}})
}

func keep(r rune, _ bool) string { return string(r) }

// Microsoft Teams: a workflow "Post to a channel when a webhook request is
// received" takes a message with one Adaptive Card attachment.

type teamsMessage struct {
	Type        string            `json:"type"`
	Attachments []teamsAttachment `json:"attachments"`
}

type teamsAttachment struct {
	ContentType string       `json:"contentType"`
	ContentURL  *string      `json:"contentUrl"` // always null: the card is inline
	Content     adaptiveCard `json:"content"`
}

type adaptiveCard struct {
	Schema  string       `json:"$schema"`
	Type    string       `json:"type"`
	Version string       `json:"version"`
	Body    []any        `json:"body"` // cardText and cardFacts
	Actions []cardAction `json:"actions,omitempty"`
}

type cardText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Weight   string `json:"weight,omitempty"`
	Size     string `json:"size,omitempty"`
	IsSubtle bool   `json:"isSubtle,omitempty"`
	Wrap     bool   `json:"wrap"`
}

type cardFacts struct {
	Type  string     `json:"type"`
	Facts []cardFact `json:"facts"`
}

type cardFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

type cardAction struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
	Style string `json:"style,omitempty"` // positive or destructive
}

// teamsEscape makes user text literal in an Adaptive Card, whose TextBlock
// and FactSet render a markdown subset. It puts a backslash (CommonMark's
// escape, which Teams' renderers honour) before each mark that could
// format or link, \ ` * _ [ ] ( ) # ~ < > (the last two make <url>
// autolinks), and before a leading - or +, which would start a list.
// Backslashes were chosen over stripping so the text reads as typed.
func teamsEscape(r rune, first bool) string {
	if strings.ContainsRune("\\`*_[]()#~<>", r) || first && (r == '-' || r == '+') {
		return `\` + string(r)
	}
	return string(r)
}

// Teams workflow webhooks cannot call back, so a Teams card's Approve
// and Reject open the page that confirms that decision (TeamsDecideURL):
// one click there decides, as proposed, as the person signed in.

// TeamsDecideURL is where a Teams card's decision button leads: the
// confirm page of decision on the approval whose page is pageURL, or ""
// when pageURL is not that approval's page.
func TeamsDecideURL(pageURL, id, decision string) string {
	base, ok := strings.CutSuffix(pageURL, paths.Approval(id))
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return ""
	}
	return base + paths.ApprovalDecide(id, decision)
}

func encodeTeams(b WebhookBody) ([]byte, error) {
	v := newChatView(b)
	body := []any{cardText{Type: "TextBlock", Text: clip(v.kind.headline, 200, teamsEscape), Weight: "bolder", Size: "medium", Wrap: true}}
	if v.title != "" {
		body = append(body, cardText{Type: "TextBlock", Text: clip(v.title, teamsTitleMax, teamsEscape), Wrap: true})
	}
	if v.decided != "" {
		body = append(body, cardText{Type: "TextBlock", Text: clip(v.decided, 300, teamsEscape), Wrap: true})
	}
	var facts []cardFact
	if v.risk != "" {
		facts = append(facts, cardFact{Title: "Risk", Value: v.risk})
	}
	if v.status != "" {
		facts = append(facts, cardFact{Title: "Status", Value: clip(v.status, statusMax, teamsEscape)})
	}
	if facts != nil {
		body = append(body, cardFacts{Type: "FactSet", Facts: facts})
	}
	approve, reject := TeamsDecideURL(v.url, v.id, "approve"), TeamsDecideURL(v.url, v.id, "reject")
	decide := v.ask && v.settle && approve != ""
	if v.ask && !v.settle {
		body = append(body, cardText{Type: "TextBlock", Text: v.why, Wrap: true})
	}
	body = append(body, cardText{Type: "TextBlock", Text: v.note(teamsEscape), Size: "small", IsSubtle: true, Wrap: true})
	card := adaptiveCard{Schema: "http://adaptivecards.io/schemas/adaptive-card.json", Type: "AdaptiveCard", Version: "1.4", Body: body}
	if decide {
		card.Actions = []cardAction{{Type: "Action.OpenUrl", Title: "Approve", URL: approve, Style: "positive"},
			{Type: "Action.OpenUrl", Title: "Reject", URL: reject, Style: "destructive"}}
	}
	if v.url != "" {
		card.Actions = append(card.Actions, cardAction{Type: "Action.OpenUrl", Title: v.kind.button, URL: v.url})
	}
	return json.Marshal(teamsMessage{Type: "message", Attachments: []teamsAttachment{
		{ContentType: "application/vnd.microsoft.card.adaptive", Content: card},
	}})
}
