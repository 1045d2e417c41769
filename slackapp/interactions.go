package slackapp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/slackapi"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/wire"
)

// A click on an approval message (block_actions) or the Reject form's
// submission (view_submission) arrives signed with the organisation's
// signing secret. The button's value, or the form's private metadata,
// names the organisation and the approval; before the signature is
// checked it is used for nothing but choosing which secret to check with.

// Reply is the endpoint's answer to Slack: a status and, when not nil, a
// JSON body (a view_submission's response_action).
type Reply = wire.SlackReply

// The Reject form: its callback id, and the block and action of its note.
const (
	rejectCallback = "assent_reject"
	noteBlock      = "note"
	noteAction     = "note"
	// noteMax is the longest note the form takes (Slack's plain_text_input
	// limit; a decision's note may be longer on the page).
	noteMax = 3000
)

// rejectMeta is the Reject form's private_metadata: what the submission
// decides and which message it then updates.
type rejectMeta struct {
	Org         string `json:"org"`
	Approval    string `json:"approval"`
	ResponseURL string `json:"responseUrl"`
}

// slackUserID is the form of a Slack user id, which the message names.
var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{1,40}$`)

// Interact handles one interaction request: header and body exactly as
// Slack sent them.
func (s *Service) Interact(ctx context.Context, header http.Header, body []byte) Reply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, InteractionsPath, bytes.NewReader(body))
	if err != nil {
		return Reply{Status: http.StatusBadRequest}
	}
	req.Header.Set("Content-Type", header.Get("Content-Type"))
	cb, err := slack.InteractionCallbackParse(req)
	if err != nil {
		return Reply{Status: http.StatusBadRequest}
	}
	org, id, action, meta := target(&cb)
	if org == "" {
		return Reply{Status: http.StatusBadRequest}
	}
	app, err := s.admin.SlackApp(ctx, org)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return Reply{Status: http.StatusUnauthorized} // nothing to verify it with
	case err != nil:
		s.log.Error("slack interaction: read the Slack app", "org", org, "error", err)
		return Reply{Status: http.StatusInternalServerError}
	}
	if err := verify(header, body, app.SigningSecret); err != nil {
		s.log.Warn("slack interaction refused: its signature does not verify", "org", org, "error", err)
		return Reply{Status: http.StatusUnauthorized}
	}
	// From here on the request is Slack's, for this organisation's app.
	switch {
	case cb.Type == slack.InteractionTypeViewSubmission:
		return s.submitReject(ctx, app, &cb, meta)
	case action == events.SlackApprove || action == events.SlackReject:
		s.click(ctx, app, &cb, id, action)
	}
	return Reply{Status: http.StatusOK} // Open, whose link the browser follows
}

// verify checks Slack's v0 signature over body with secret: HMAC-SHA256,
// compared in constant time, the timestamp within five minutes.
func verify(header http.Header, body []byte, secret string) error {
	if secret == "" {
		return errors.New("no signing secret is set")
	}
	sv, err := slack.NewSecretsVerifier(header, secret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}

// target reads which organisation and approval an interaction is about,
// and which of the message's buttons was clicked (empty for a form's
// submission, whose metadata is returned).
func target(cb *slack.InteractionCallback) (org, id, action string, meta *rejectMeta) {
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		for _, a := range cb.ActionCallback.BlockActions {
			if a.ActionID != events.SlackApprove && a.ActionID != events.SlackReject && a.ActionID != events.SlackOpen {
				continue
			}
			if org, id, ok := events.ParseButtonValue(a.Value); ok {
				return org, id, a.ActionID, nil
			}
		}
	case slack.InteractionTypeViewSubmission:
		var m rejectMeta
		if cb.View.CallbackID == rejectCallback && json.Unmarshal([]byte(cb.View.PrivateMetadata), &m) == nil && m.Org != "" && m.Approval != "" {
			return m.Org, m.Approval, "", &m
		}
	}
	return "", "", "", nil
}

// click handles Approve or Reject on an approval message: approve as
// proposed at once, or open the Reject form. Whatever refuses it is told
// to the clicker alone.
func (s *Service) click(ctx context.Context, app *admin.SlackIntegration, cb *slack.InteractionCallback, id, action string) {
	tell := func(msg string) { s.ephemeral(ctx, cb.ResponseURL, msg) }
	a, err := s.approvals.Get(ctx, app.OrganizationID, id)
	if err != nil {
		tell(s.refusal(err, "Assent could not read this request"))
		return
	}
	who, refused := s.member(ctx, app, cb.User.ID)
	if refused != "" {
		tell(refused + " Open the request to decide it: " + approvals.PageURL(s.baseURL, a.ID))
		return
	}
	if ok, why := approvals.ChatSettle(a); !ok {
		tell(why + " " + approvals.PageURL(s.baseURL, a.ID))
		return
	}
	if action == events.SlackReject {
		if a.Status != states.Pending {
			tell("This request is already " + a.Status + ".")
			return
		}
		if !slices.Contains(a.ApproverIDs, who.ID) {
			tell("You are not among this request's approvers.")
			return
		}
		s.openRejectForm(ctx, app, cb, a)
		return
	}
	// The click's trigger id is the Update id: Slack's retry of this click
	// gets this click's outcome, and decides nothing more.
	decided, err := s.approvals.DecideVia(ctx, app.OrganizationID, a.ID, "slack/"+cb.TriggerID, who,
		approvals.Decision{Decision: "approve"}, via(cb.User.ID))
	if err != nil {
		tell(s.refusal(err, "Assent could not record your approval"))
		return
	}
	s.update(ctx, app, cb.ResponseURL, decided, cb.User.ID, "approved")
}

// openRejectForm opens the modal that asks for the rejection's note.
func (s *Service) openRejectForm(ctx context.Context, app *admin.SlackIntegration, cb *slack.InteractionCallback, a *approvals.Approval) {
	meta, err := json.Marshal(rejectMeta{Org: app.OrganizationID, Approval: a.ID, ResponseURL: cb.ResponseURL})
	if err != nil {
		s.ephemeral(ctx, cb.ResponseURL, "Assent could not open the form.")
		return
	}
	text := func(kind, s string) *slack.TextBlockObject { return &slack.TextBlockObject{Type: kind, Text: s} }
	input := &slack.PlainTextInputBlockElement{Type: slack.METPlainTextInput, ActionID: noteAction, Multiline: true, MaxLength: noteMax,
		Placeholder: text(slack.PlainTextType, "Say why, for the requester")}
	title := a.Title
	if r := []rune(title); len(r) > 200 {
		title = string(r[:199]) + "…"
	}
	view := slack.ModalViewRequest{Type: slack.VTModal, CallbackID: rejectCallback, PrivateMetadata: string(meta),
		Title: text(slack.PlainTextType, "Reject request"), Submit: text(slack.PlainTextType, "Reject"), Close: text(slack.PlainTextType, "Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(&slack.TextBlockObject{Type: slack.PlainTextType, Text: title}, nil, nil),
			slack.NewInputBlock(noteBlock, text(slack.PlainTextType, "Note"), nil, input),
		}}}
	if _, err := slackapi.New(app.BotToken, s.http, s.apiURL).OpenViewContext(ctx, cb.TriggerID, view); err != nil {
		s.log.Warn("slack: views.open", "org", app.OrganizationID, "approval", a.ID, "error", err)
		s.ephemeral(ctx, cb.ResponseURL, "Slack did not open the form ("+err.Error()+"). Open the request to reject it: "+approvals.PageURL(s.baseURL, a.ID))
	}
}

// submitReject decides the Reject form's submission. A refusal is shown
// on the form, under the note.
func (s *Service) submitReject(ctx context.Context, app *admin.SlackIntegration, cb *slack.InteractionCallback, meta *rejectMeta) Reply {
	refuse := func(msg string) Reply {
		return Reply{Status: http.StatusOK, Body: slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlock: msg})}
	}
	who, refused := s.member(ctx, app, cb.User.ID)
	if refused != "" {
		return refuse(refused)
	}
	var note string
	if cb.View.State != nil {
		note = strings.TrimSpace(cb.View.State.Values[noteBlock][noteAction].Value)
	}
	if note == "" {
		return refuse("Say why you reject it.")
	}
	a, err := s.approvals.Get(ctx, app.OrganizationID, meta.Approval)
	if err != nil {
		return refuse(s.refusal(err, "Assent could not read this request"))
	}
	if ok, why := approvals.ChatSettle(a); !ok {
		return refuse(why)
	}
	// The form's view id is the Update id: one form decides once.
	decided, err := s.approvals.DecideVia(ctx, app.OrganizationID, a.ID, "slack/"+cb.View.ID, who,
		approvals.Decision{Decision: "reject", Note: note}, via(cb.User.ID))
	if err != nil {
		return refuse(s.refusal(err, "Assent could not record your rejection"))
	}
	s.update(ctx, app, meta.ResponseURL, decided, cb.User.ID, "rejected")
	return Reply{Status: http.StatusOK} // closes the form
}

// via is the timeline's note of a decision made in Slack.
func via(userID string) string {
	if !slackUserID.MatchString(userID) {
		userID = "unknown"
	}
	return "from Slack (Slack user " + userID + ")"
}

// member maps a Slack user to the active member with the email Slack
// verified for them (users.info with the app's bot token, kept briefly).
// Slack guests, people without a member, and Assent's guests are refused:
// refused says why, for them.
func (s *Service) member(ctx context.Context, app *admin.SlackIntegration, userID string) (accounts.Actor, string) {
	const unknown = "Assent does not know you: no member of this organisation has the email your Slack account uses, so you cannot decide from Slack."
	if app.BotToken == "" {
		return accounts.Actor{}, "This Slack app has no bot token in Assent, so Assent cannot tell who you are."
	}
	u, ok := s.users.get(app.OrganizationID, userID, time.Now())
	if !ok {
		info, err := slackapi.New(app.BotToken, s.http, s.apiURL).GetUserInfoContext(ctx, userID)
		if err != nil {
			s.log.Warn("slack: users.info", "org", app.OrganizationID, "user", userID, "error", err)
			return accounts.Actor{}, "Assent could not look you up in Slack."
		}
		u = slackUser{email: info.Profile.Email, guest: info.IsRestricted || info.IsUltraRestricted, stranger: info.IsStranger,
			gone: info.Deleted || info.IsBot, lookedUpAt: time.Now()}
		s.users.put(app.OrganizationID, userID, u)
	}
	switch {
	case u.gone:
		return accounts.Actor{}, unknown
	case u.guest:
		return accounts.Actor{}, "Guests of this Slack workspace cannot decide from Slack."
	case u.stranger:
		return accounts.Actor{}, "People of another Slack workspace cannot decide from Slack here."
	case u.email == "":
		return accounts.Actor{}, "Slack did not share your email with Assent (the app needs the users:read.email scope), so Assent cannot tell who you are."
	}
	who, err := s.accounts.ActiveMemberByEmail(ctx, app.OrganizationID, u.email)
	if apperr.Is(err, apperr.NotFound) {
		return accounts.Actor{}, unknown
	}
	if err != nil {
		s.log.Error("slack: look up the member", "org", app.OrganizationID, "error", err)
		return accounts.Actor{}, "Assent could not look you up."
	}
	return who, ""
}

// refusal is what the clicker reads when err stops them: the service's
// message for a refusal, fallback for anything else (logged).
func (s *Service) refusal(err error, fallback string) string {
	if e, ok := apperr.As(err); ok && e.Status() < 500 {
		msg := e.Message
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		return strings.TrimSuffix(msg, ".") + "."
	}
	s.log.Error("slack interaction", "error", err)
	return fallback + "; try again, or open it in Assent."
}

// ephemeral tells the clicker alone, through the click's response_url.
func (s *Service) ephemeral(ctx context.Context, responseURL, text string) {
	if responseURL == "" {
		return
	}
	msg := &slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral, ReplaceOriginal: false, Text: text}
	if err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg); err != nil {
		s.log.Warn("slack: response_url", "error", err)
	}
}

// update replaces the approval's message in the channel, for everyone: it
// now says who decided, when, and that it was done in Slack; a request
// that needs more approvals keeps its buttons.
func (s *Service) update(ctx context.Context, app *admin.SlackIntegration, responseURL string, a *approvals.Approval, userID, did string) {
	if responseURL == "" {
		return
	}
	kind := events.ApprovalRequested
	switch a.Status {
	case states.Approved:
		kind = events.ApprovalApproved
	case states.Rejected:
		kind = events.ApprovalRejected
	}
	body, err := events.NewWebhookBody(kind, approvals.NewWire(a, s.baseURL), time.Now())
	if err != nil {
		s.log.Error("slack: message update", "error", err)
		return
	}
	text, blocks := events.SlackMessage(body, events.SlackOptions{Interactive: app.Interactive(), Org: app.OrganizationID})
	who := "someone"
	if slackUserID.MatchString(userID) {
		who = "<@" + userID + ">"
	}
	line := strings.ToUpper(did[:1]) + did[1:] + " in Slack by " + who
	if a.Status == states.Pending && a.RequiredApprovals > 1 {
		line = fmt.Sprintf("%s %s in Slack: %d of %d approvals", who, did, a.ApprovalsSoFar, a.RequiredApprovals)
	}
	blocks = slices.Insert(blocks, 2, slack.Block(slack.NewContextBlock("", &slack.TextBlockObject{Type: slack.MarkdownType, Text: line})))
	msg := &slack.WebhookMessage{ReplaceOriginal: true, Text: text, Blocks: &slack.Blocks{BlockSet: blocks}}
	if err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg); err != nil {
		s.log.Warn("slack: update the message", "org", app.OrganizationID, "approval", a.ID, "error", err)
	}
}
