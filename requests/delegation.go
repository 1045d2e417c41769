package requests

import (
	"context"
	"fmt"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// OnBehalfOf says, by delegate, whom each delegate a request asked at
// creation stands in for, read from how each person was reached (see
// StandIns): the workflow's input, so it knows who acts for whom.
func OnBehalfOf(via map[string][]models.Via) map[string]workflows.Delegator {
	var out map[string]workflows.Delegator
	for id, v := range via {
		if d, ok := models.StandsInFor(v); ok {
			if out == nil {
				out = map[string]workflows.Delegator{}
			}
			out[id] = workflows.Delegator{ID: d.ID, Name: d.Name}
		}
	}
	return out
}

// InputOf is what every kind's workflow input starts with, for the record
// whose base is b and who it asked through whom (via, by person id).
func InputOf(b *models.RequestBase, via map[string][]models.Via) workflows.RequestInput {
	in := workflows.RequestInput{OrganizationID: b.OrganizationID, Requester: b.Requester, ExpiresAt: b.ExpiresAt, OnBehalfOf: OnBehalfOf(via)}
	if b.ExternalID != nil {
		in.ExternalID = *b.ExternalID
	}
	return in
}

// AskedVia is how a collection or a review reached each person it asked
// at creation, by id.
func AskedVia(asked []models.PersonRef) map[string][]models.Via {
	out := make(map[string][]models.Via, len(asked))
	for _, p := range asked {
		out[p.ID] = p.Via
	}
	return out
}

// HandoverID names the Update that hands requests waiting on d's
// delegator to to, the end of their chain: the same for every request
// and every time it is sent, so each request applies it once.
func HandoverID(d models.Delegation, to string) string {
	return fmt.Sprintf("delegation/%s/%s/%d", d.DelegatorID, to, d.From.UnixMicro())
}

// handover is what rec allows of a hand-over: its kind's rule, if it has
// one (HandsOver).
func (l *Lifecycle[T]) handover(ctx context.Context, rec *T) (Handover, error) {
	if k, ok := l.kind.(HandsOver[T]); ok {
		return k.Handover(ctx, rec)
	}
	return handoverOf(l.kind.Head(rec))
}

// AddDelegate asks who stands in for delegatorID, whose delegation has
// started, on the open records named that still wait on them, through
// each workflow's addDelegate Update: on each record, the end of the
// delegator's chain in away (the delegations holding now) that the record
// may go to (its kind's Handover). updateID names the delegation, so a
// retry is applied once. A record that no longer waits on the delegator,
// already asks the delegate, or may go to nobody on the chain (its
// requester, a review's delegate who cannot read its report) is skipped:
// the delegator stays asked.
func (l *Lifecycle[T]) AddDelegate(ctx context.Context, orgID string, ids []string, updateID, delegatorID string, away map[string]models.Delegation) error {
	return l.UpdateEach(ctx, orgID, ids, workflows.UpdateAddDelegate, updateID, func(rec *T) (workflows.Argument, error) {
		h, err := l.handover(ctx, rec)
		if err != nil {
			return nil, err
		}
		r, ok, err := h.Delegate(ctx, away, delegatorID)
		if err != nil {
			return nil, err
		}
		if !ok {
			l.records.Log.Info("a request waiting on someone away stays theirs: it may go to nobody standing in for them",
				"kind", l.names.Kind, "id", l.kind.Head(rec).ID, "delegator", delegatorID)
			return nil, apperr.New(apperr.Conflict, "%s may go to nobody standing in for %s", l.kind.Head(rec).ID, delegatorID)
		}
		return &r, nil
	}, apperr.InvalidState, apperr.NotAnApprover, apperr.NotARespondent, apperr.NotAReviewer, apperr.AlreadyDecided, apperr.Conflict)
}
