package notify

import (
	"context"
	"errors"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/wire"
)

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

// Reviewers emails each reviewer the review's page, once. Nothing is sent
// once the review is no longer open.
func (n *Notifier) Reviewers(ctx context.Context, orgID, reviewID string) error {
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
			Title: r.Title, Instructions: shorten(r.Instructions, descriptionLimit), RequestedBy: r.RequestedBy,
			Version: r.Version, Expires: mailTime(r.ExpiresAt), PageURL: wire.ReviewURL(n.BaseURL, r.ID)}
		notice := "review/" + r.ID + "/" + p.ID()
		errs = append(errs, n.once(ctx, orgID, notice, func() (draft, error) {
			msg, err := render("reviewer", p.Email(), "Your review is needed: "+r.Title, data)
			return draft{msg: msg}, err
		}), n.push(ctx, orgID, notice, p.ID(), PushMessage{Title: r.Title, Kind: events.RequestReview, URL: data.PageURL}, r.ExpiresAt))
	}
	return errors.Join(errs...)
}
