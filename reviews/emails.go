package reviews

import (
	"context"
	"embed"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
)

//go:embed emails
var emailFiles embed.FS

// emails are a review's: to its reviewers.
var emails = notify.MustTemplates(emailFiles, "emails")

// reviewerMail is the data of the email to one reviewer.
type reviewerMail struct {
	notify.AskedMail
	Instructions string
	Version      int
}

// emailReviewers emails each reviewer the review's page, once. Nothing is
// sent once the review is no longer open.
func emailReviewers(ctx context.Context, n *notify.Notifier, orgID, reviewID string) error {
	r, err := n.Store.Reviews().Get(ctx, orgID, reviewID)
	if err != nil || r.Status != states.Open {
		return err
	}
	people, err := n.Store.People(ctx, orgID, r.ReviewerIDs)
	if err != nil {
		return err
	}
	page := PageURL(n.BaseURL, r.ID)
	push := notify.PushMessage{Title: r.Title, Kind: events.RequestReview, URL: page}
	return n.AskEach(ctx, orgID, people, "review/"+r.ID+"/", push, r.ExpiresAt, func(p *models.Person) (notify.Draft, error) {
		data := reviewerMail{AskedMail: notify.NewAskedMail(p, &r.RequestBase, false, page),
			Instructions: notify.Shorten(r.Instructions, notify.DescriptionLimit), Version: r.Version}
		msg, err := emails.Render("reviewer", p.Email(), "Your review is needed: "+r.Title, data)
		return notify.Draft{Msg: msg}, err
	})
}
