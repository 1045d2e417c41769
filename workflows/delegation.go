package workflows

import (
	"maps"
	"slices"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
)

// Delegation while away: a request made while someone is away asks who
// stands in for them from the start (the input's OnBehalfOf); one already
// waiting on them when their delegation starts gains the delegate through
// the addDelegate Update, as an escalation adds approvers. Either way the
// delegate acts in their own name, on behalf of the person away, and the
// state keeps whom each delegate stands in for.

// ActionDelegated is a delegate asked beside a person away.
const ActionDelegated = "delegated"

// RequestInput is what every kind's workflow input starts with (embedded,
// so its fields stand in the input's JSON as before).
type RequestInput struct {
	OrganizationID string
	ExternalID     string
	// Requester is who created the request (a member id, or the key id
	// for an agent); only the requester answers an approver's question.
	Requester string
	ExpiresAt time.Time
	// OnBehalfOf says, by delegate, whom each delegate asked at creation
	// stands in for.
	OnBehalfOf map[string]Delegator `json:",omitempty"`
}

// Delegator is the person away whom a delegate stands in for.
type Delegator struct {
	ID   string
	Name string
}

// AddDelegateRequest asks a request still waiting on the delegator, whose
// delegation has just started, to ask the delegate too.
type AddDelegateRequest struct {
	Target
	// DelegatorID and DelegatorName are who set the delegation.
	DelegatorID   string
	DelegatorName string
	// DelegateID and DelegateName are who stands in: the end of the
	// delegator's chain of delegations, which the caller follows.
	DelegateID   string
	DelegateName string
}

// checkAddDelegate refuses a delegate the request does not need: it no
// longer waits on the delegator (not asked, notAsked; or acted, by them or
// on their behalf) or already asks the delegate. The caller treats every refusal as nothing
// left to do.
func checkAddDelegate(asked []string, acted func(string) bool, notAsked string, r AddDelegateRequest) error {
	switch {
	case !slices.Contains(asked, r.DelegatorID):
		return Refuse(notAsked, "%s is not asked by this request", r.DelegatorID)
	case acted(r.DelegatorID):
		return Refuse(apperr.AlreadyDecided, "%s has already acted on this request", r.DelegatorID)
	case r.DelegateID == "" || slices.Contains(asked, r.DelegateID):
		return Refuse(apperr.Conflict, "%s is already asked by this request", r.DelegateID)
	}
	return nil
}

// AddDelegate returns asked with r's delegate, and onBehalfOf saying whom
// they stand in for: the delegator, or whom the delegator stands in for
// when they are a delegate themselves. detail is the timeline's entry.
func AddDelegate(asked []string, onBehalfOf map[string]Delegator, r AddDelegateRequest) ([]string, map[string]Delegator, string) {
	away := Delegator{ID: r.DelegatorID, Name: r.DelegatorName}
	if d, ok := onBehalfOf[r.DelegatorID]; ok {
		away = d
	}
	return append(slices.Clone(asked), r.DelegateID), standsFor(onBehalfOf, r.DelegateID, away),
		r.DelegatorName + " is away, so " + r.DelegateName + " was asked on behalf of " + away.Name
}

// standsFor returns onBehalfOf with id standing in for away.
func standsFor(onBehalfOf map[string]Delegator, id string, away Delegator) map[string]Delegator {
	out := maps.Clone(onBehalfOf)
	if out == nil {
		out = map[string]Delegator{}
	}
	out[id] = away
	return out
}

// AddDefaults returns asked with each of defaults not yet in it nor
// removed (the person just taken off), and onBehalfOf saying whom those of
// them who are delegates (standIns, by delegate: the caller replaced an
// owner away by who stands in for them) stand in for; added reports
// whether anyone joined.
func AddDefaults(asked []string, onBehalfOf map[string]Delegator, defaults []string, standIns map[string]Delegator, removed string) ([]string, map[string]Delegator, bool) {
	asked, added := slices.Clone(asked), false
	for _, id := range defaults {
		if id == removed || slices.Contains(asked, id) {
			continue
		}
		asked = append(asked, id)
		if away, ok := standIns[id]; ok {
			onBehalfOf = standsFor(onBehalfOf, id, away)
		}
		added = true
	}
	return asked, onBehalfOf, added
}

// delegated is the transition of an added delegate; its actor is who set
// the delegation.
func delegated[S RequestState](r AddDelegateRequest, detail string) Transition[S] {
	return Transition[S]{Action: ActionDelegated, ActorID: r.DelegatorID, ActorName: r.DelegatorName, Detail: detail}
}

// OnBehalf says for the timeline whom someone acting stood in for, or
// nothing.
func OnBehalf(d *Delegator) string {
	if d == nil {
		return ""
	}
	return "on behalf of " + d.Name
}

// StandsInFor is whom id stands in for, or nil when they act in their own
// name.
func StandsInFor(onBehalfOf map[string]Delegator, id string) *Delegator {
	if d, ok := onBehalfOf[id]; ok {
		return &d
	}
	return nil
}

// countsFor is the person whose voice id's act is: whom id stands in
// for, or id. A person and who stands in for them act once between them.
func countsFor(onBehalfOf map[string]Delegator, id string) string {
	if d, ok := onBehalfOf[id]; ok {
		return d.ID
	}
	return id
}

// ActedFor reports whether one of those who acted (by) already acted for
// the person id acts for.
func ActedFor(onBehalfOf map[string]Delegator, by []string, id string) bool {
	return slices.ContainsFunc(by, func(b string) bool { return countsFor(onBehalfOf, b) == countsFor(onBehalfOf, id) })
}

// JoinDetail joins a timeline entry's parts, leaving out empty ones.
func JoinDetail(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += p
	}
	return out
}
