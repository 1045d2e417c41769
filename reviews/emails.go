package reviews

import (
	"context"
	"embed"
	"errors"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/notify"
	"github.com/assent-hq/assent/wire"
)

//go:embed emails
var emailFiles embed.FS

// emails are a review's: to its reviewers.
var emails = notify.MustTemplates(emailFiles, "emails")

// reviewerMail is the data of the email to one reviewer.
type reviewerMail struct {
	Name         string
	Organization string
	Guest        bool
	Title        string
	Instructions string
	RequestedBy  string
	Version      int
	Expires      string
	PageURL      string
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
	var errs []error
	for _, p := range people {
		data := reviewerMail{Name: p.DisplayName(), Organization: p.Organization.Name, Guest: p.Guest != nil,
			Title: r.Title, Instructions: notify.Shorten(r.Instructions, notify.DescriptionLimit), RequestedBy: r.RequestedBy,
			Version: r.Version, Expires: notify.MailTime(r.ExpiresAt), PageURL: wire.ReviewURL(n.BaseURL, r.ID)}
		notice := "review/" + r.ID + "/" + p.ID()
		errs = append(errs, n.Ask(ctx, orgID, notice, p.ID(), func() (notify.Draft, error) {
			msg, err := emails.Render("reviewer", p.Email(), "Your review is needed: "+r.Title, data)
			return notify.Draft{Msg: msg}, err
		}, notify.PushMessage{Title: r.Title, Kind: events.RequestReview, URL: data.PageURL}, r.ExpiresAt))
	}
	return errors.Join(errs...)
}
