package activities

import (
	"context"
	"encoding/json"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/workflows"
)

// PersistReview writes one review transition: the record, its audit entry
// and its outbox event, in one transaction. A retry of a transition
// already written changes nothing.
func (a *Activities) PersistReview(ctx context.Context, t workflows.ReviewTransition) error {
	_, err := a.Store.ApplyReviewChange(ctx, models.ReviewChange{
		OrganizationID: t.OrganizationID,
		ID:             t.ReviewID,
		Seq:            t.Seq,
		Apply: func(rec *models.Review) (models.AuditEntry, error) {
			applyReviewState(rec, &t)
			return models.AuditEntry{Action: t.Action, ActorID: t.ActorID, ActorName: t.ActorName, Detail: t.Detail, At: t.At}, nil
		},
		Event: t.Event,
		EventData: func(rec *models.Review) ([]byte, error) {
			return json.Marshal(wire.NewReview(rec, a.BaseURL))
		},
	})
	return err
}

// EmailReviewers emails the review's reviewers its page.
func (a *Activities) EmailReviewers(ctx context.Context, in workflows.EmailReviewersInput) error {
	return a.Notify.Reviewers(ctx, in.OrganizationID, in.ReviewID)
}

// applyReviewState copies the workflow's state onto the record and names
// who acted where the workflow could not know it.
func applyReviewState(rec *models.Review, t *workflows.ReviewTransition) {
	s := &t.State
	rec.Status, rec.ReviewerIDs, rec.RequiredApprovals = s.Status, s.ReviewerIDs, s.RequiredApprovals
	rec.ApprovalsSoFar, rec.SettledAt = s.ApprovalsSoFar, s.SettledAt
	rec.Verdicts.V = make([]models.Verdict, len(s.Verdicts))
	for i, v := range s.Verdicts {
		rec.Verdicts.V[i] = models.Verdict(v)
	}
	switch {
	case t.Action == workflows.ActionExpired:
		t.ActorID, t.ActorName = systemActor.ID, systemActor.Name
	case t.ActorID == "" || t.ActorID == rec.Requester:
		t.ActorID, t.ActorName = rec.Requester, rec.RequestedBy
	}
}
