package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/states"
)

// requestKind is what each kind's workflow (approval, collection, review)
// tells the request core about itself, so that whom a request asks is
// handed over, and a request cancelled, in one place for every kind.
type requestKind interface {
	// checkOpen refuses any change to a request that has settled.
	checkOpen() error
	// asking points into the state at whom the request asks to act and
	// whom each delegate among them stands in for.
	asking() (asked *[]string, onBehalfOf *map[string]Delegator)
	// acted lists who has done what the request asks of them (approved,
	// replied, returned a verdict).
	acted() []string
	// notAsked is the code that refuses a person the request does not ask.
	notAsked() string
	// emailAsked emails the people asked whom no email reached yet.
	emailAsked(ctx workflow.Context)
	// settle ends the request in status: cancelled, expired, or the
	// kind's own.
	settle(ctx workflow.Context, status string)
}

// askingUpdates are the Updates every kind takes alike, each with its
// validator: cancel, and addDelegate.
func (r *request[S]) askingUpdates() []update {
	return []update{
		{UpdateCancel, r.cancel, validator(r.id, r.checkCancel)},
		{UpdateAddDelegate, r.addDelegate, validator(r.id, r.checkAddDelegate)},
	}
}

// checkCancel lets the requester withdraw an open request, and owners and
// administrators withdraw anyone's.
func (r *request[S]) checkCancel(req CancelRequest) error {
	if err := r.kind.checkOpen(); err != nil {
		return err
	}
	return mayCancel(r.requester, req)
}

func (r *request[S]) cancel(ctx workflow.Context, req CancelRequest) (S, error) {
	err := r.transition(ctx, func() (Transition[S], error) {
		// Who may cancel is the validator's to check: it depends only on
		// the request, and a handler check would change how histories of
		// cancels accepted before it replay.
		if err := r.kind.checkOpen(); err != nil {
			return Transition[S]{}, err
		}
		r.kind.settle(ctx, states.Cancelled)
		return cancelled[S](req, r.requester), nil
	})
	return r.state, err
}

// checkAddDelegate takes a delegate only for a person the open request
// still waits on; the caller treats any refusal as nothing left to do.
func (r *request[S]) checkAddDelegate(req AddDelegateRequest) error {
	if err := r.kind.checkOpen(); err != nil {
		return err
	}
	asked, onBehalfOf := r.kind.asking()
	acted := r.kind.acted()
	return checkAddDelegate(*asked, func(id string) bool { return actedFor(*onBehalfOf, acted, id) }, r.kind.notAsked(), req)
}

// addDelegate asks the delegate of a person whose delegation started
// while the request waited on them, and emails them (the email skips
// whoever was emailed already), as an approval's escalation does. The
// Update adds commands only to histories that receive it, so older
// histories replay unchanged without a version marker.
func (r *request[S]) addDelegate(ctx workflow.Context, req AddDelegateRequest) (S, error) {
	err := r.transition(ctx, func() (Transition[S], error) {
		if err := r.checkAddDelegate(req); err != nil {
			return Transition[S]{}, err
		}
		asked, onBehalfOf := r.kind.asking()
		var detail string
		*asked, *onBehalfOf, detail = addDelegate(*asked, *onBehalfOf, req)
		return delegated[S](req, detail), nil
	})
	if err == nil {
		r.kind.emailAsked(ctx)
	}
	return r.state, err
}
