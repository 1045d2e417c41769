package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
)

// RequestKind is what each kind's workflow (approval, collection, review)
// tells the request core about itself, so that whom a request asks is
// handed over, and a request cancelled, in one place for every kind.
type RequestKind interface {
	// CheckOpen refuses any change to a request that has settled.
	CheckOpen() error
	// Asking points into the state at whom the request asks to act and
	// whom each delegate among them stands in for.
	Asking() (asked *[]string, onBehalfOf *map[string]Delegator)
	// Acted lists who has done what the request asks of them (approved,
	// replied, returned a verdict).
	Acted() []string
	// NotAsked is the code that refuses a person the request does not ask.
	NotAsked() string
	// EmailAsked emails the people asked whom no email reached yet.
	EmailAsked(ctx workflow.Context)
	// Settle ends the request in status: cancelled, expired, or the
	// kind's own.
	Settle(ctx workflow.Context, status string)
}

// AskingUpdates are the Updates every kind takes alike, each with its
// validator: cancel, and addDelegate.
func (r *Request[S]) AskingUpdates() []Update {
	return []Update{
		{UpdateCancel, r.cancel, Validator(r.id, r.checkCancel)},
		{UpdateAddDelegate, r.addDelegate, Validator(r.id, r.checkAddDelegate)},
	}
}

// checkCancel lets the requester withdraw an open request, and owners and
// administrators withdraw anyone's.
func (r *Request[S]) checkCancel(req CancelRequest) error {
	if err := r.kind.CheckOpen(); err != nil {
		return err
	}
	return mayCancel(r.requester, req)
}

func (r *Request[S]) cancel(ctx workflow.Context, req CancelRequest) (S, error) {
	err := r.Apply(ctx, func() (Transition[S], error) {
		// Who may cancel is the validator's to check: it depends only on
		// the request, and a handler check would change how histories of
		// cancels accepted before it replay.
		if err := r.kind.CheckOpen(); err != nil {
			return Transition[S]{}, err
		}
		r.kind.Settle(ctx, states.Cancelled)
		return cancelled[S](req, r.requester), nil
	})
	return r.State, err
}

// checkAddDelegate takes a delegate only for a person the open request
// still waits on; the caller treats any refusal as nothing left to do.
func (r *Request[S]) checkAddDelegate(req AddDelegateRequest) error {
	if err := r.kind.CheckOpen(); err != nil {
		return err
	}
	asked, onBehalfOf := r.kind.Asking()
	acted := r.kind.Acted()
	return checkAddDelegate(*asked, func(id string) bool { return ActedFor(*onBehalfOf, acted, id) }, r.kind.NotAsked(), req)
}

// addDelegate asks the delegate of a person whose delegation started
// while the request waited on them, and emails them (the email skips
// whoever was emailed already), as an approval's escalation does. The
// Update adds commands only to histories that receive it, so older
// histories replay unchanged without a version marker.
func (r *Request[S]) addDelegate(ctx workflow.Context, req AddDelegateRequest) (S, error) {
	err := r.Apply(ctx, func() (Transition[S], error) {
		if err := r.checkAddDelegate(req); err != nil {
			return Transition[S]{}, err
		}
		asked, onBehalfOf := r.kind.Asking()
		var detail string
		*asked, *onBehalfOf, detail = AddDelegate(*asked, *onBehalfOf, req)
		return delegated[S](req, detail), nil
	})
	if err == nil {
		r.kind.EmailAsked(ctx)
	}
	return r.State, err
}

// CancelRequest withdraws an open request of any kind.
type CancelRequest struct {
	Target
	ActorID   string
	ActorName string
	// Administrator is set for an owner, an administrator or an admin key,
	// who may withdraw a request someone else made.
	Administrator bool
}

// CancelledForRequester is the audit detail of an owner or administrator
// withdrawing someone else's request.
const CancelledForRequester = "as an owner or administrator, for the requester"

// mayCancel lets the requester withdraw their request, and owners and
// administrators withdraw anyone's; every kind of request shares it.
func mayCancel(requester string, r CancelRequest) error {
	if r.ActorID != requester && !r.Administrator {
		return Refuse(apperr.Forbidden, "only the requester, an owner or an administrator may cancel this request")
	}
	return nil
}
