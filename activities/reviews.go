package activities

import (
	"context"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/workflows"
)

// PersistReview writes one review transition (see persist).
func (a *Activities) PersistReview(ctx context.Context, t workflows.ReviewTransition) error {
	return persist(ctx, a.Store, a.Store.Reviews(), t, fillReview,
		func(rec *models.Review) any { return wire.NewReview(rec, a.BaseURL) })
}

// EmailReviewers emails the review's reviewers its page.
func (a *Activities) EmailReviewers(ctx context.Context, in workflows.EmailReviewersInput) error {
	return a.Notify.Reviewers(ctx, in.OrganizationID, in.ReviewID)
}

// fillReview copies the workflow's state onto the record.
func fillReview(rec *models.Review, t *workflows.ReviewTransition) error {
	s := &t.State
	rec.Status, rec.ReviewerIDs, rec.RequiredApprovals = s.Status, s.ReviewerIDs, s.RequiredApprovals
	rec.Asked.V = withDelegates(rec.Asked.V, s.ReviewerIDs, s.OnBehalfOf, "reviewers")
	rec.ApprovalsSoFar, rec.SettledAt = s.ApprovalsSoFar, s.SettledAt
	rec.Verdicts.V = make([]models.Verdict, len(s.Verdicts))
	for i, v := range s.Verdicts {
		rec.Verdicts.V[i] = models.Verdict{ReviewerID: v.ReviewerID, ReviewerName: v.ReviewerName, ReviewerEmail: v.ReviewerEmail,
			Verdict: v.Verdict, Note: v.Note, At: v.At}
		if v.OnBehalfOf != nil {
			rec.Verdicts.V[i].OnBehalfOfID, rec.Verdicts.V[i].OnBehalfOfName = v.OnBehalfOf.ID, v.OnBehalfOf.Name
		}
	}
	nameActor(t, rec.Requester, rec.RequestedBy)
	return nil
}
