package reviews

import (
	"context"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Activities are a review's activities, which the worker registers by
// their method names (ActivityPersist, …).
type Activities struct{ requests.ActivityEnv }

// Worker is what the worker runs of reviews.
var Worker = requests.Worker{WorkflowType: WorkflowType, Workflow: Workflow,
	Activities: func(env requests.ActivityEnv, _ *netguard.Policy) any { return &Activities{ActivityEnv: env} }}

// PersistReview writes one review transition (requests.PersistTransition).
func (a *Activities) PersistReview(ctx context.Context, t Transition) (workflows.Persisted, error) {
	return requests.PersistTransition(ctx, a.Store, Records(a.Store), t, fill,
		func(rec *Review) any { return NewWire(rec, a.BaseURL) },
		func(ctx context.Context, rec *Review) error { return askReviewers(ctx, a.ActivityEnv, rec) })
}

// EmailReviewers emails the review's reviewers its page.
func (a *Activities) EmailReviewers(ctx context.Context, in EmailReviewersInput) error {
	return emailReviewers(ctx, a.ActivityEnv, in.OrganizationID, in.ReviewID)
}

// fill copies the workflow's state onto the record.
func fill(rec *Review, t *Transition) error {
	s := &t.State
	rec.Status, rec.ReviewerIDs, rec.RequiredApprovals = s.Status, s.ReviewerIDs, s.RequiredApprovals
	rec.Asked.V = requests.WithDelegates(rec.Asked.V, s.ReviewerIDs, s.OnBehalfOf, "reviewers")
	rec.ApprovalsSoFar, rec.SettledAt = s.ApprovalsSoFar, s.SettledAt
	rec.Verdicts.V = make([]StoredVerdict, len(s.Verdicts))
	for i, v := range s.Verdicts {
		rec.Verdicts.V[i] = StoredVerdict{ReviewerID: v.ReviewerID, ReviewerName: v.ReviewerName, ReviewerEmail: v.ReviewerEmail,
			Verdict: v.Verdict, Note: v.Note, At: v.At}
		if v.OnBehalfOf != nil {
			rec.Verdicts.V[i].OnBehalfOfID, rec.Verdicts.V[i].OnBehalfOfName = v.OnBehalfOf.ID, v.OnBehalfOf.Name
		}
	}
	requests.NameActor(t, rec.Requester, rec.RequestedBy)
	return nil
}
