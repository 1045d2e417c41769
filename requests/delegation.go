package requests

import (
	"context"

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

// AskedVia is how a collection or a review reached each person it asked
// at creation, by id.
func AskedVia(asked []models.PersonRef) map[string][]models.Via {
	out := make(map[string][]models.Via, len(asked))
	for _, p := range asked {
		out[p.ID] = p.Via
	}
	return out
}

// AddDelegate asks delegate, through each workflow's addDelegate Update,
// on the open records named that still wait on delegator, whose
// delegation has started. updateID names the delegation, so a retry is
// applied once; a record that no longer waits on the delegator, or
// already asks the delegate, is skipped.
func (l *Lifecycle[T]) AddDelegate(ctx context.Context, orgID string, ids []string, updateID string, delegator, delegate models.PersonRef) error {
	return l.UpdateEach(ctx, orgID, ids, workflows.UpdateAddDelegate, updateID, func(string) (workflows.Argument, error) {
		return &workflows.AddDelegateRequest{DelegatorID: delegator.ID, DelegatorName: delegator.Name,
			DelegateID: delegate.ID, DelegateName: delegate.Name}, nil
	}, apperr.InvalidState, apperr.NotAnApprover, apperr.NotARespondent, apperr.NotAReviewer, apperr.AlreadyDecided, apperr.Conflict)
}
