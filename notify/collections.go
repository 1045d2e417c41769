package notify

import (
	"context"
	"errors"
	"slices"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/wire"
)

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

// Respondents emails the collection's respondents its page: at creation
// everyone asked, for the reminder only personIDs (who had not replied
// when it was due). Each person gets each email once; nothing is sent once
// the collection is no longer open.
func (n *Notifier) Respondents(ctx context.Context, orgID, collectionID string, reminder bool, personIDs []string) error {
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
			Reminder: reminder, Title: c.Title, Description: shorten(c.Description, descriptionLimit),
			RequestedBy: c.RequestedBy, Questions: len(c.Questions.V), Expires: mailTime(c.ExpiresAt),
			PageURL: wire.CollectionURL(n.BaseURL, c.ID)}
		if c.DueAt != nil {
			data.Due = mailTime(*c.DueAt)
		}
		errs = append(errs, n.once(ctx, orgID, notice+p.ID(), func() (draft, error) {
			msg, err := render("respondent", p.Email(), subject+c.Title, data)
			return draft{msg: msg}, err
		}), n.push(ctx, orgID, notice+p.ID(), p.ID(), PushMessage{Title: c.Title, Kind: events.RequestCollection,
			URL: data.PageURL}, c.ExpiresAt))
	}
	return errors.Join(errs...)
}
