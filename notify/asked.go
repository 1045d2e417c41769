package notify

import (
	"context"
	"errors"

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

// Asking is an email to people a request asks: the request, of kind
// (events.RequestApproval, …), whether it is the reminder, and the risk
// its push shows, if its kind has one.
type Asking struct {
	Kind     string
	Request  *models.RequestBase
	Reminder bool
	Risk     string
}

// AskAbout asks each of ids about the request (Ask), each once for the
// notice "<kind>/<id>/" ("…/reminder/" for the reminder) followed by
// their id, its page pushed to their browsers and the email build makes
// from what every such email shows (AskedMail). One address the mail
// server refuses must not keep the rest from being asked: every person is
// tried, and the errors are joined, so that the activity's retry reaches
// those not reached.
func (n *Notifier) AskAbout(ctx context.Context, a Asking, ids []string, build func(p *models.Person, m AskedMail) (Draft, error)) error {
	b := a.Request
	people, err := n.Store.People(ctx, b.OrganizationID, ids)
	if err != nil {
		return err
	}
	notice, page := a.Kind+"/"+b.ID+"/", n.BaseURL+models.RequestPage(a.Kind, b.ID)
	if a.Reminder {
		notice += "reminder/"
	}
	push := PushMessage{Title: b.Title, Kind: a.Kind, Risk: a.Risk, URL: page}
	var errs []error
	for _, p := range people {
		m := AskedMail{Name: p.DisplayName(), Organization: p.Organization.Name, Guest: p.Guest != nil, Reminder: a.Reminder,
			Title: b.Title, RequestedBy: b.RequestedBy, Expires: MailTime(b.ExpiresAt), PageURL: page}
		errs = append(errs, n.Ask(ctx, b.OrganizationID, notice+p.ID(), p.ID(), func() (Draft, error) { return build(p, m) }, push, b.ExpiresAt))
	}
	return errors.Join(errs...)
}
