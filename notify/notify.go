// Package notify is how the worker's activities email people and push to
// their browsers (push.go): each email once per notice (Once), a person
// asked to act emailed and pushed at once (Ask), emails rendered from
// their templates (Templates). Each request kind's emails are its own, in
// its folder; a report send's are here. Activities call it, so a failed
// send is retried on a fixed schedule; a retry skips who was reached.
package notify

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io/fs"
	"log/slog"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/models"
)

//go:embed templates
var files embed.FS

// Store is what the emails and pushes read and record: the people asked
// and their organisation, the report a send is of, the notices already
// sent, and the browsers subscribed to push.
type Store interface {
	GetOrganization(ctx context.Context, id string) (*models.Organization, error)
	People(ctx context.Context, orgID string, personIDs []string) ([]*models.Person, error)
	GetReport(ctx context.Context, orgID, idOrSlug string) (*models.Report, error)
	GetSend(ctx context.Context, orgID, id string) (*models.ReportSend, error)
	NoticeSent(ctx context.Context, id string) (bool, error)
	RecordNotice(ctx context.Context, orgID, id string) error
	PushSubscriptions(ctx context.Context, orgID, personID string) ([]models.PushSubscription, error)
	RemovePushSubscription(ctx context.Context, sub *models.PushSubscription) error
	VAPIDKey(ctx context.Context) (public, private string, err error)
}

// Notifier sends the emails about requests.
type Notifier struct {
	Store Store
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

// DescriptionLimit keeps an email short; the page has the whole text.
const DescriptionLimit = 1500

// Draft is an email ready to send, with how to undo what making it
// created when it is not sent.
type Draft struct {
	Msg mail.Message
	// Discard, when set, undoes what building the email made.
	Discard func(context.Context) error
}

// sendTimeout bounds one email; the activity's retry covers a slow server.
const sendTimeout = 30 * time.Second

// Once sends the email build makes unless the notice id records it as
// sent, and records it after: a crash in between sends it again rather
// than never. An email that fails to send is discarded.
func (n *Notifier) Once(ctx context.Context, orgID, id string, build func() (Draft, error)) error {
	if n.Mailer == nil {
		n.logger().WarnContext(ctx, "email not sent: set ASSENT_SMTP_HOST so people are emailed", "notice", id)
		return nil
	}
	if sent, err := n.sent(ctx, id); err != nil || sent {
		return err
	}
	d, err := build()
	if err != nil {
		return err
	}
	sendCtx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := n.Mailer.Send(sendCtx, d.Msg); err != nil {
		err = fmt.Errorf("email %s: %w", id, err)
		if d.Discard != nil {
			// A server that took the email yet answered with an error
			// leaves a dead link in it, which is the safe side.
			err = errors.Join(err, d.Discard(context.WithoutCancel(ctx)))
		}
		return err
	}
	// Sent: recorded even when the attempt's time has run out, so that
	// no retry sends it again.
	return n.Store.RecordNotice(context.WithoutCancel(ctx), orgID, id)
}

// noneSentKey marks a context whose notices none was recorded yet.
type noneSentKey struct{}

// NoneSent marks ctx as sending about a transition its caller has just
// written, the first time: nothing about it was sent before, so Once and
// the pushes send without looking their notices up (each is still
// recorded, for a retry).
func NoneSent(ctx context.Context) context.Context {
	return context.WithValue(ctx, noneSentKey{}, true)
}

// sent says whether notice id records as sent what is about to go.
func (n *Notifier) sent(ctx context.Context, id string) (bool, error) {
	if none, _ := ctx.Value(noneSentKey{}).(bool); none {
		return false, nil
	}
	return n.Store.NoticeSent(ctx, id)
}

func (n *Notifier) logger() *slog.Logger {
	if n.Logger != nil {
		return n.Logger
	}
	return slog.Default()
}

// Ask emails a person asked to act (Once, under notice) and pushes msg to
// their browsers (push); every person asked is tried, and either failing
// fails the attempt for the activity's retry.
func (n *Notifier) Ask(ctx context.Context, orgID, notice, personID string, build func() (Draft, error), msg PushMessage, expires time.Time) error {
	return errors.Join(n.Once(ctx, orgID, notice, build), n.push(ctx, orgID, notice, personID, msg, expires))
}

// Templates are a set of emails, each written twice: name.txt and
// name.html in one folder of an embedded file system (each kind's emails
// beside its service).
type Templates struct {
	texts *texttemplate.Template
	htmls *htmltemplate.Template
}

// MustTemplates parses the emails in dir of files.
func MustTemplates(files fs.FS, dir string) *Templates {
	return &Templates{texts: texttemplate.Must(texttemplate.ParseFS(files, dir+"/*.txt")),
		htmls: htmltemplate.Must(htmltemplate.ParseFS(files, dir+"/*.html"))}
}

var reportEmails = MustTemplates(files, "templates")

// Render makes a message to to from the templates name.txt and
// name.html, its subject folded onto one line.
func (t *Templates) Render(name, to, subject string, data any) (mail.Message, error) {
	var text, html bytes.Buffer
	if err := t.texts.ExecuteTemplate(&text, name+".txt", data); err != nil {
		return mail.Message{}, err
	}
	if err := t.htmls.ExecuteTemplate(&html, name+".html", data); err != nil {
		return mail.Message{}, err
	}
	return mail.Message{To: []string{to}, Subject: oneLine(subject), Text: text.String(), HTML: html.String()}, nil
}

// MailTime is how emails show a time.
func MailTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

// oneLine folds a subject made from a request's title onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Shorten cuts s to at most n characters, at a word where it can.
func Shorten(s string, n int) string {
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
