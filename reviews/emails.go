package reviews

import (
	"context"
	"embed"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/requests"
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
func emailReviewers(ctx context.Context, env requests.ActivityEnv, orgID, reviewID string) error {
	r, err := Records(env.Store).Get(ctx, orgID, reviewID)
	if err != nil {
		return err
	}
	return askReviewers(ctx, env, r)
}

// askReviewers is emailReviewers of r as read.
func askReviewers(ctx context.Context, env requests.ActivityEnv, r *Review) error {
	n := env.Notify
	if r.Status != states.Open {
		return nil
	}
	return n.AskAbout(ctx, notify.Asking{Kind: Kind, Request: &r.RequestBase}, r.ReviewerIDs, func(p *models.Person, m notify.AskedMail) (notify.Draft, error) {
		data := reviewerMail{AskedMail: m, Instructions: notify.Shorten(r.Instructions, notify.DescriptionLimit), Version: r.Version}
		msg, err := emails.Render("reviewer", p.Email(), "Your review is needed: "+r.Title, data)
		return notify.Draft{Msg: msg}, err
	})
}
