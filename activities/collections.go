package activities

import (
	"context"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/workflows"
)

// PersistCollection writes one collection transition (see persist).
func (a *Activities) PersistCollection(ctx context.Context, t workflows.CollectionTransition) error {
	return persist(ctx, a.Store, a.Store.Collections(), t, fillCollection,
		func(rec *models.Collection) any { return wire.NewCollection(rec, a.BaseURL) })
}

// EmailRespondents emails the collection's respondents its page, or the
// reminder to those who had not replied.
func (a *Activities) EmailRespondents(ctx context.Context, in workflows.EmailRespondentsInput) error {
	return a.Notify.Respondents(ctx, in.OrganizationID, in.CollectionID, in.Reminder, in.PersonIDs)
}

// fillCollection copies the workflow's state onto the record.
func fillCollection(rec *models.Collection, t *workflows.CollectionTransition) error {
	s := &t.State
	rec.Status = s.Status
	// A transition scheduled by older code carries no respondents; keep them.
	if s.RespondentIDs != nil {
		rec.RespondentIDs, rec.RequiredResponses = s.RespondentIDs, s.RequiredResponses
		rec.Asked.V = withDelegates(rec.Asked.V, s.RespondentIDs, s.OnBehalfOf, "respondents")
	}
	rec.ResponsesSoFar = s.ResponsesSoFar
	rec.SettledAt, rec.RemindedAt = s.SettledAt, s.RemindedAt
	rec.Replies.V = make([]models.Reply, len(s.Replies))
	for i, r := range s.Replies {
		rec.Replies.V[i] = models.Reply{RespondentID: r.RespondentID, RespondentName: r.RespondentName,
			RespondentEmail: r.RespondentEmail, SubmittedAt: r.SubmittedAt, Answers: r.Answers}
		if r.OnBehalfOf != nil {
			rec.Replies.V[i].OnBehalfOfID, rec.Replies.V[i].OnBehalfOfName = r.OnBehalfOf.ID, r.OnBehalfOf.Name
		}
	}
	nameActor(t, rec.Requester, rec.RequestedBy)
	return nil
}
