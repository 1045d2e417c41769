package collections

import (
	"context"
	"embed"
	"slices"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
)

//go:embed emails
var emailFiles embed.FS

// emails are a request for information's: to its respondents, at creation
// and the reminder.
var emails = notify.MustTemplates(emailFiles, "emails")

// respondentMail is the data of the email to one respondent.
type respondentMail struct {
	notify.AskedMail
	Description string
	Questions   int
	Due         string
}

// emailRespondents emails the collection's respondents its page: at
// creation everyone asked, for the reminder only personIDs (who had not
// replied when it was due). Each person gets each email once; nothing is
// sent once the collection is no longer open.
func emailRespondents(ctx context.Context, env requests.ActivityEnv, orgID, collectionID string, reminder bool, personIDs []string) error {
	c, err := Records(env.Store).Get(ctx, orgID, collectionID)
	if err != nil {
		return err
	}
	return askRespondents(ctx, env, c, reminder, personIDs)
}

// askRespondents is emailRespondents of c as read.
func askRespondents(ctx context.Context, env requests.ActivityEnv, c *Collection, reminder bool, personIDs []string) error {
	n := env.Notify
	if c.Status != states.Open {
		return nil
	}
	ids := c.RespondentIDs
	if reminder {
		ids = slices.DeleteFunc(slices.Clone(personIDs), c.Replied)
	}
	subject := "Your answers are needed: "
	if reminder {
		subject = "Reminder, answers needed: "
	}
	return n.AskAbout(ctx, notify.Asking{Kind: Kind, Request: &c.RequestBase, Reminder: reminder}, ids, func(p *models.Person, m notify.AskedMail) (notify.Draft, error) {
		data := respondentMail{AskedMail: m, Description: notify.Shorten(c.Description, notify.DescriptionLimit), Questions: len(c.Questions.V)}
		if c.DueAt != nil {
			data.Due = notify.MailTime(*c.DueAt)
		}
		msg, err := emails.Render("respondent", p.Email(), subject+c.Title, data)
		return notify.Draft{Msg: msg}, err
	})
}
