package collections

import (
	"context"

	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Activities are a collection's activities, which the worker registers by
// their method names (ActivityPersist, …).
type Activities struct{ requests.ActivityEnv }

// Worker is what the worker runs of requests for information.
var Worker = requests.Worker{WorkflowType: WorkflowType, Workflow: Workflow,
	Activities: func(env requests.ActivityEnv, _ *netguard.Policy) any { return &Activities{ActivityEnv: env} }}

// PersistCollection writes one collection transition
// (requests.PersistTransition).
func (a *Activities) PersistCollection(ctx context.Context, t Transition) (workflows.Persisted, error) {
	return requests.PersistTransition(ctx, a.Store, Records(a.Store), t, fill,
		func(rec *Collection) any { return NewWire(rec, a.BaseURL) },
		func(ctx context.Context, rec *Collection) error {
			return askRespondents(ctx, a.ActivityEnv, rec, false, nil)
		})
}

// EmailRespondents emails the collection's respondents its page, or the
// reminder to those who had not replied.
func (a *Activities) EmailRespondents(ctx context.Context, in EmailRespondentsInput) error {
	return emailRespondents(ctx, a.ActivityEnv, in.OrganizationID, in.CollectionID, in.Reminder, in.PersonIDs)
}

// fill copies the workflow's state onto the record.
func fill(rec *Collection, t *Transition) error {
	s := &t.State
	rec.Status = s.Status
	// A transition scheduled by older code carries no respondents; keep them.
	if s.RespondentIDs != nil {
		rec.RespondentIDs, rec.RequiredResponses = s.RespondentIDs, s.RequiredResponses
		rec.Asked.V = requests.WithDelegates(rec.Asked.V, s.RespondentIDs, s.OnBehalfOf, "respondents")
	}
	rec.ResponsesSoFar = s.ResponsesSoFar
	rec.SettledAt, rec.RemindedAt = s.SettledAt, s.RemindedAt
	rec.Replies.V = make([]StoredReply, len(s.Replies))
	for i, r := range s.Replies {
		rec.Replies.V[i] = StoredReply{RespondentID: r.RespondentID, RespondentName: r.RespondentName,
			RespondentEmail: r.RespondentEmail, SubmittedAt: r.SubmittedAt, Answers: r.Answers}
		if r.OnBehalfOf != nil {
			rec.Replies.V[i].OnBehalfOfID, rec.Replies.V[i].OnBehalfOfName = r.OnBehalfOf.ID, r.OnBehalfOf.Name
		}
	}
	requests.NameActor(t, rec.Requester, rec.RequestedBy)
	return nil
}
