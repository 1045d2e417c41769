package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Delegation is a member's delegation while away on the wire.
type Delegation struct {
	Delegator Person        `json:"delegator"`
	Delegate  Person        `json:"delegate"`
	From      wiretime.Time `json:"from"`
	Until     wiretime.Time `json:"until"`
	Note      string        `json:"note"`
	// Active is whether it holds now: requests made now ask the delegate.
	Active bool `json:"active"`
}

// MyDelegation is the caller's own delegation (null when none) and the
// delegations that name them, the soonest first.
type MyDelegation struct {
	Delegation    *Delegation  `json:"delegation"`
	DelegatedToMe []Delegation `json:"delegatedToMe"`
}

// NewDelegation serializes d.
func NewDelegation(d *models.Delegation) Delegation {
	return Delegation{Delegator: memberPerson(d.Delegator, d.DelegatorID), Delegate: memberPerson(d.Delegate, d.DelegateID),
		From: wiretime.New(d.From), Until: wiretime.New(d.Until), Note: d.Note, Active: d.ActiveAt(models.Now())}
}

// NewMyDelegation serializes a member's delegation and those to them.
func NewMyDelegation(mine *models.Delegation, toMe []models.Delegation) MyDelegation {
	out := MyDelegation{DelegatedToMe: All(toMe, NewDelegation)}
	if mine != nil {
		d := NewDelegation(mine)
		out.Delegation = &d
	}
	return out
}

// memberPerson names a member as a request names people; a member not
// found keeps their id.
func memberPerson(m *models.Member, id string) Person {
	if m == nil {
		return Person{ID: id, Kind: models.ApproverMember}
	}
	return Person{ID: m.ID, Name: m.Name, Email: m.Email, Kind: models.ApproverMember}
}
