package notify

import (
	"context"
	"errors"
	"time"

	"github.com/assent-hq/assent/models"
)

// AskedMail is what every email asking a person to act on a request
// shows: whom it greets and for which organisation, the request, who
// asked, until when, and the page to act on. Each kind's email data
// embeds it, so its templates read these by the same names.
type AskedMail struct {
	Name         string
	Organization string
	Guest        bool
	Reminder     bool
	Title        string
	RequestedBy  string
	Expires      string
	PageURL      string
}

// NewAskedMail is the email to p about request b, whose page is pageURL.
func NewAskedMail(p *models.Person, b *models.RequestBase, reminder bool, pageURL string) AskedMail {
	return AskedMail{Name: p.DisplayName(), Organization: p.Organization.Name, Guest: p.Guest != nil, Reminder: reminder,
		Title: b.Title, RequestedBy: b.RequestedBy, Expires: MailTime(b.ExpiresAt), PageURL: pageURL}
}

// AskEach asks each of people (Ask), each once for the notice that is
// notice followed by their id, with the email build makes for them. One
// address the mail server refuses must not keep the rest from being
// asked: every person is tried, and the errors are joined, so that the
// activity's retry reaches those not reached.
func (n *Notifier) AskEach(ctx context.Context, orgID string, people []*models.Person, notice string, msg PushMessage, expires time.Time,
	build func(p *models.Person) (Draft, error)) error {
	var errs []error
	for _, p := range people {
		errs = append(errs, n.Ask(ctx, orgID, notice+p.ID(), p.ID(), func() (Draft, error) { return build(p) }, msg, expires))
	}
	return errors.Join(errs...)
}
