// Package notify emails people about requests: each approver when an
// approval arrives, with a sign-in-free decision link when its risk allows
// one, and whoever asked a question when the requester answers it. Each
// email that asks a person is also pushed to their subscribed browsers
// (push.go). The
// approval workflow calls it through activities, so a failed send is
// retried on a fixed schedule; a retry skips the people already emailed.
package notify

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"log/slog"
	"slices"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

//go:embed templates
var files embed.FS

// Notifier sends the emails about requests.
type Notifier struct {
	Store *models.Store
	// Mailer sends the emails; nil means the process cannot send email,
	// and each email is logged as not sent instead of retried forever.
	Mailer mail.Sender
	// BaseURL starts every link in the emails.
	BaseURL string
	// Push, when set, also pushes each email that asks a person to that
	// person's subscribed browsers.
	Push   *Push
	Logger *slog.Logger
}

// descriptionLimit keeps an email short; the page has the whole text.
const descriptionLimit = 1500

// approverMail is the data of the email to one approver.
type approverMail struct {
	Name         string
	Organization string
	Guest        bool
	Reminder     bool
	Title        string
	Description  string
	Risk         string
	RequestedBy  string
	Expires      string
	Concerns     bool
	PageURL      string
	// LinkURL is the sign-in-free decision link; empty for high and
	// critical risk.
	LinkURL string
	// OnBehalfOf names the person away whom the approver stands in for,
	// when they were asked as a delegate.
	OnBehalfOf string
}

// Approvers emails each approver of the approval who has not been emailed
// about it yet. Nothing is sent once the approval is no longer pending.
func (n *Notifier) Approvers(ctx context.Context, orgID, approvalID string) error {
	return n.approvers(ctx, orgID, approvalID, false, nil)
}

// ApproverReminder emails the approval's one reminder to personIDs (who
// had not decided when it was due), less whoever approved since, each
// once. Nothing is sent once the approval is no longer pending.
func (n *Notifier) ApproverReminder(ctx context.Context, orgID, approvalID string, personIDs []string) error {
	return n.approvers(ctx, orgID, approvalID, true, personIDs)
}

func (n *Notifier) approvers(ctx context.Context, orgID, approvalID string, reminder bool, personIDs []string) error {
	a, err := n.Store.Approvals().Get(ctx, orgID, approvalID)
	if err != nil || a.Status != states.Pending {
		return err
	}
	ids, notice := a.ApproverIDs, "approval/"+a.ID+"/"
	if reminder {
		ids = slices.DeleteFunc(slices.Clone(personIDs), func(id string) bool { return !a.ApproverIDs.Contains(id) || a.ApprovedBy.Contains(id) })
		notice += "reminder/"
	}
	people, err := n.Store.People(ctx, orgID, ids)
	if err != nil {
		return err
	}
	// One address the mail server refuses must not keep the rest from
	// being emailed: every approver is tried, and the attempt fails (to be
	// retried for those not reached) if any send failed.
	var errs []error
	for _, p := range people {
		if p.ID() == a.Requester {
			continue // the requester cannot approve their own request
		}
		errs = append(errs, n.once(ctx, orgID, notice+p.ID(), func() (draft, error) {
			return n.approverMessage(ctx, a, p, reminder)
		}), n.push(ctx, orgID, notice+p.ID(), p.ID(), PushMessage{Title: a.Title, Kind: events.RequestApproval, Risk: a.Risk,
			URL: wire.ApprovalURL(n.BaseURL, a.ID)}, a.ExpiresAt))
	}
	return errors.Join(errs...)
}

// draft is an email ready to send, with how to undo what making it
// created when it is not sent.
type draft struct {
	msg mail.Message
	// discard, when set, undoes what building the email made.
	discard func(context.Context) error
}

func (n *Notifier) approverMessage(ctx context.Context, a *models.Approval, p *models.Person, reminder bool) (draft, error) {
	data := approverMail{Name: p.DisplayName(), Organization: p.Organization.Name, Guest: p.Guest != nil, Reminder: reminder,
		Title: a.Title, Description: shorten(a.Description, descriptionLimit), Risk: a.Risk, RequestedBy: a.RequestedBy,
		Expires: mailTime(a.ExpiresAt), Concerns: len(a.Concerns.V) > 0,
		PageURL: wire.ApprovalURL(n.BaseURL, a.ID)}
	if v, ok := a.StandsInFor(p.ID()); ok {
		data.OnBehalfOf = v.Name
	}
	var d draft
	if models.SignInFree(a.Risk) {
		token, err := n.Store.CreateDecisionLink(ctx, a, p.ID())
		if err != nil {
			return draft{}, err
		}
		data.LinkURL = n.BaseURL + paths.DecisionLink(a.ID, token)
		// A link in an email that was not sent must not stay live.
		d.discard = func(ctx context.Context) error { return n.Store.DiscardDecisionLink(ctx, token) }
	}
	var err error
	subject := "Approval needed: "
	if reminder {
		subject = "Reminder, approval needed: "
	}
	d.msg, err = render("approver", p.Email(), subject+a.Title, data)
	if err != nil && d.discard != nil {
		err = errors.Join(err, d.discard(ctx))
	}
	return d, err
}

// answerMail is the data of the email that brings an answer.
type answerMail struct {
	Name     string
	Title    string
	Question string
	Answer   string
	PageURL  string
}

// Answer emails whoever asked questionID its answer. An asker who is no
// longer a member, or an agent's key, gets nothing.
func (n *Notifier) Answer(ctx context.Context, orgID, approvalID, questionID, askerID string) error {
	a, err := n.Store.Approvals().Get(ctx, orgID, approvalID)
	if err != nil {
		return err
	}
	var q *models.Question
	for i := range a.Questions.V {
		if a.Questions.V[i].QuestionID == questionID {
			q = &a.Questions.V[i]
		}
	}
	if q == nil || q.Answer == nil {
		return fmt.Errorf("question %s of approval %s has no answer to send", questionID, approvalID)
	}
	people, err := n.Store.People(ctx, orgID, []string{askerID})
	if err != nil || len(people) == 0 {
		return err
	}
	p := people[0]
	return n.once(ctx, orgID, "answer/"+questionID, func() (draft, error) {
		msg, err := render("answer", p.Email(), "Answered: "+a.Title, answerMail{Name: p.DisplayName(), Title: a.Title,
			Question: q.Question, Answer: *q.Answer, PageURL: wire.ApprovalURL(n.BaseURL, a.ID)})
		return draft{msg: msg}, err
	})
}

// sendTimeout bounds one email; the activity's retry covers a slow server.
const sendTimeout = 30 * time.Second

// once sends the email build makes unless the notice id records it as
// sent, and records it after: a crash in between sends it again rather
// than never. An email that fails to send is discarded.
func (n *Notifier) once(ctx context.Context, orgID, id string, build func() (draft, error)) error {
	sent, err := n.Store.NoticeSent(ctx, id)
	if err != nil || sent {
		return err
	}
	if n.Mailer == nil {
		n.logger().WarnContext(ctx, "email not sent: set ASSENT_SMTP_HOST so people are emailed", "notice", id)
		return nil
	}
	d, err := build()
	if err != nil {
		return err
	}
	sendCtx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := n.Mailer.Send(sendCtx, d.msg); err != nil {
		err = fmt.Errorf("email %s: %w", id, err)
		if d.discard != nil {
			// A server that took the email yet answered with an error
			// leaves a dead link in it, which is the safe side.
			err = errors.Join(err, d.discard(context.WithoutCancel(ctx)))
		}
		return err
	}
	return n.Store.RecordNotice(ctx, orgID, id)
}

func (n *Notifier) logger() *slog.Logger {
	if n.Logger != nil {
		return n.Logger
	}
	return slog.Default()
}

var (
	texts = texttemplate.Must(texttemplate.ParseFS(files, "templates/*.txt"))
	htmls = htmltemplate.Must(htmltemplate.ParseFS(files, "templates/*.html"))
)

// render makes a message from the templates name.txt and name.html.
func render(name, to, subject string, data any) (mail.Message, error) {
	var text, html bytes.Buffer
	if err := texts.ExecuteTemplate(&text, name+".txt", data); err != nil {
		return mail.Message{}, err
	}
	if err := htmls.ExecuteTemplate(&html, name+".html", data); err != nil {
		return mail.Message{}, err
	}
	return mail.Message{To: []string{to}, Subject: oneLine(subject), Text: text.String(), HTML: html.String()}, nil
}

// mailTime is how emails show a time.
func mailTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

// oneLine folds a subject made from a request's title onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// shorten cuts s to at most n characters, at a word where it can.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexAny(cut, " \n"); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut) + " …"
}
