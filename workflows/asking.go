package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
)

// RequestKind is what each kind's workflow (approval, collection, review)
// tells the request core about itself, so that whom a request asks is
// handed over and taken off, and a request cancelled, in one place for
// every kind.
type RequestKind[S RequestState] interface {
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
	// Removal names taking a person off the request.
	Removal() Removal
	// CheckRemove refuses taking personID off for the kind's own reason,
	// beyond a settled request or a person it does not ask: a kind
	// whose acts are final refuses someone who has acted.
	CheckRemove(personID string) error
	// Removed finishes, within t, taking req's person off those asked:
	// what the kind does when those left cannot settle the request. It
	// reports whether people joined, who are then emailed.
	Removed(ctx workflow.Context, req RemoveAskedRequest, t *Transition[S]) (joined bool)
}

// Removal is what a kind calls taking a person off its request: the
// Update, the audit action, and what the people asked are ("approvers").
type Removal struct {
	Update, Action, Asked string
}

// RemoveAskedRequest takes a person off an open request: an administrator
// removed them from the organisation. Each kind takes it as its own
// Update (Removal), named as before the kinds shared it.
type RemoveAskedRequest struct {
	Target
	PersonID string
	// PersonName names the person on the timeline.
	PersonName string
	// Defaults are who joins when those left could not settle the
	// request (an approval's owners and administrators, a review's who may
	// read its report), each away replaced by who stands in for them. The
	// caller reads them, as the workflow cannot. A request for information
	// has none: it needs fewer replies instead.
	Defaults []string `json:",omitempty"`
	// OnBehalfOf says, by delegate, whom those of Defaults who stand in
	// for someone away stand in for (requests.StandIns). Absent from
	// Updates sent before defaults went through delegations.
	OnBehalfOf map[string]Delegator `json:",omitempty"`
	// ActorID and ActorName are who removed the person.
	ActorID   string
	ActorName string
}

// Updates are every Update the request takes, each with its validator:
// cancel and addDelegate, the kind's own, then the kind's Removal. The
// order is the order their handlers are registered in, which decides
// which of the Updates waiting when the workflow starts runs first: it is
// the order the kinds registered them in before the core took the removal
// over, so that saved histories replay.
func (r *Request[S]) Updates(own ...Update) []Update {
	return append(append([]Update{
		{UpdateCancel, r.cancel, Validator(r.id, r.checkCancel)},
		{UpdateAddDelegate, r.addDelegate, Validator(r.id, r.checkAddDelegate)},
	}, own...), Update{r.kind.Removal().Update, r.removeAsked, Validator(r.id, r.checkRemoveAsked)})
}

// ActRefusals are a kind's words for refusing a person's act (a reply, a
// verdict): not asked, acted already, and acted for by whom they stand in
// for or who stands in for them; ActedCode is its code for the last two.
type ActRefusals struct {
	NotAsked, Acted, ActedFor, ActedCode string
}

// CheckAct says whether who may act on the request now: it is open, asks
// them, and neither they nor anyone acting for the same person has acted.
// A kind's validator calls it to refuse early, its handler again under the
// lock.
func (r *Request[S]) CheckAct(who string, words ActRefusals) error {
	if err := r.kind.CheckOpen(); err != nil {
		return err
	}
	asked, onBehalfOf := r.kind.Asking()
	acted := r.kind.Acted()
	// The codes are the kind's (its NotAsked, its ActRefusals' ActedCode),
	// which the refusals test reads there.
	notAsked, actedCode := r.kind.NotAsked(), words.ActedCode
	switch {
	case !slices.Contains(*asked, who):
		return Refuse(notAsked, "%s", words.NotAsked)
	case slices.Contains(acted, who):
		return Refuse(actedCode, "%s", words.Acted)
	case ActedFor(*onBehalfOf, acted, who):
		return Refuse(actedCode, "%s", words.ActedFor)
	}
	return nil
}

// checkRemoveAsked takes off an open request only someone it asks, and
// only as its kind allows; the caller treats any refusal as nothing left
// to do.
func (r *Request[S]) checkRemoveAsked(req RemoveAskedRequest) error {
	if err := r.kind.CheckOpen(); err != nil {
		return err
	}
	if asked, _ := r.kind.Asking(); !slices.Contains(*asked, req.PersonID) {
		notAsked := r.kind.NotAsked()
		return Refuse(notAsked, "%s is not among this request's %s", req.PersonID, r.kind.Removal().Asked)
	}
	return r.kind.CheckRemove(req.PersonID)
}

// removeAsked takes a person removed from the organisation off the
// request; what they did before stays. Its kind then does what those left
// need (Removed), and whoever joined is emailed (the email skips whoever
// was emailed already). The Update adds commands only to histories that
// receive it, so older histories replay unchanged without a version
// marker.
func (r *Request[S]) removeAsked(ctx workflow.Context, req RemoveAskedRequest) (S, error) {
	joined := false
	err := r.Apply(ctx, func() (Transition[S], error) {
		if err := r.checkRemoveAsked(req); err != nil {
			return Transition[S]{}, err
		}
		asked, _ := r.kind.Asking()
		*asked = slices.DeleteFunc(slices.Clone(*asked), func(id string) bool { return id == req.PersonID })
		removal := r.kind.Removal()
		t := Transition[S]{Action: removal.Action, ActorID: req.ActorID, ActorName: req.ActorName,
			Detail: "removed " + req.PersonName + " from the " + removal.Asked}
		joined = r.kind.Removed(ctx, req, &t)
		return t, nil
	})
	if err == nil && joined {
		r.kind.EmailAsked(ctx)
	}
	return r.State, err
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
