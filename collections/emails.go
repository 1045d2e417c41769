package collections

import (
	"context"
	"embed"
	"errors"
	"slices"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/wire"
)

//go:embed emails
var emailFiles embed.FS

// emails are a request for information's: to its respondents, at creation
// and the reminder.
var emails = notify.MustTemplates(emailFiles, "emails")

// respondentMail is the data of the email to one respondent.
type respondentMail struct {
	Name         string
	Organization string
	Guest        bool
	Reminder     bool
	Title        string
	Description  string
	RequestedBy  string
	Questions    int
	Due          string
	Expires      string
	PageURL      string
}

// emailRespondents emails the collection's respondents its page: at
// creation everyone asked, for the reminder only personIDs (who had not
// replied when it was due). Each person gets each email once; nothing is
// sent once the collection is no longer open.
func emailRespondents(ctx context.Context, n *notify.Notifier, orgID, collectionID string, reminder bool, personIDs []string) error {
	c, err := n.Store.Collections().Get(ctx, orgID, collectionID)
	if err != nil || c.Status != states.Open {
		return err
	}
	ids := c.RespondentIDs
	if reminder {
		ids = slices.DeleteFunc(slices.Clone(personIDs), c.Replied)
	}
	people, err := n.Store.People(ctx, orgID, ids)
	if err != nil {
		return err
	}
	notice, subject := "collection/"+c.ID+"/", "Your answers are needed: "
	if reminder {
		notice, subject = "collection/"+c.ID+"/reminder/", "Reminder, answers needed: "
	}
	var errs []error
	for _, p := range people {
		data := respondentMail{Name: p.DisplayName(), Organization: p.Organization.Name, Guest: p.Guest != nil,
			Reminder: reminder, Title: c.Title, Description: notify.Shorten(c.Description, notify.DescriptionLimit),
			RequestedBy: c.RequestedBy, Questions: len(c.Questions.V), Expires: notify.MailTime(c.ExpiresAt),
			PageURL: wire.CollectionURL(n.BaseURL, c.ID)}
		if c.DueAt != nil {
			data.Due = notify.MailTime(*c.DueAt)
		}
		errs = append(errs, n.Ask(ctx, orgID, notice+p.ID(), p.ID(), func() (notify.Draft, error) {
			msg, err := emails.Render("respondent", p.Email(), subject+c.Title, data)
			return notify.Draft{Msg: msg}, err
		}, notify.PushMessage{Title: c.Title, Kind: events.RequestCollection, URL: data.PageURL}, c.ExpiresAt))
	}
	return errors.Join(errs...)
}
