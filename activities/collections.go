package activities

import (
	"context"
	"encoding/json"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
	"github.com/assent-hq/assent/workflows"
)

// PersistCollection writes one collection transition: the record, its
// audit entry and its outbox event, in one transaction. A retry of a
// transition already written changes nothing.
func (a *Activities) PersistCollection(ctx context.Context, t workflows.CollectionTransition) error {
	_, err := a.Store.ApplyCollectionChange(ctx, models.CollectionChange{
		OrganizationID: t.OrganizationID,
		ID:             t.CollectionID,
		Seq:            t.Seq,
		Apply: func(rec *models.Collection) (models.AuditEntry, error) {
			applyCollectionState(rec, &t)
			return models.AuditEntry{Action: t.Action, ActorID: t.ActorID, ActorName: t.ActorName, Detail: t.Detail, At: t.At}, nil
		},
		Event: t.Event,
		EventData: func(rec *models.Collection) ([]byte, error) {
			return json.Marshal(wire.NewCollection(rec, a.BaseURL))
		},
	})
	return err
}

// EmailRespondents emails the collection's respondents its page, or the
// reminder to those who had not replied.
func (a *Activities) EmailRespondents(ctx context.Context, in workflows.EmailRespondentsInput) error {
	return a.Notify.Respondents(ctx, in.OrganizationID, in.CollectionID, in.Reminder, in.PersonIDs)
}

// applyCollectionState copies the workflow's state onto the record and
// names who acted where the workflow could not know it.
func applyCollectionState(rec *models.Collection, t *workflows.CollectionTransition) {
	s := &t.State
	rec.Status = s.Status
	// A transition scheduled by older code carries no respondents; keep them.
	if s.RespondentIDs != nil {
		rec.RespondentIDs, rec.RequiredResponses = s.RespondentIDs, s.RequiredResponses
	}
	rec.ResponsesSoFar = s.ResponsesSoFar
	rec.SettledAt, rec.RemindedAt = s.SettledAt, s.RemindedAt
	rec.Replies.V = make([]models.Reply, len(s.Replies))
	for i, r := range s.Replies {
		rec.Replies.V[i] = models.Reply{RespondentID: r.RespondentID, RespondentName: r.RespondentName,
			RespondentEmail: r.RespondentEmail, SubmittedAt: r.SubmittedAt, Answers: r.Answers}
	}
	switch {
	case t.Action == workflows.ActionExpired || t.Action == workflows.ActionReminded:
		t.ActorID, t.ActorName = systemActor.ID, systemActor.Name
	case t.ActorID == "" || t.ActorID == rec.Requester:
		t.ActorID, t.ActorName = rec.Requester, rec.RequestedBy
	}
}
