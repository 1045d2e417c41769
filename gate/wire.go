package gate

import (
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/wire"
)

// Answer is the gate's answer to an allowed check or one that needs
// a person.
type Answer struct {
	Decision      string  `json:"decision"`
	CheckID       string  `json:"checkId"`
	Action        string  `json:"action"`
	Rule          *string `json:"rule"`
	DecisionToken *string `json:"decisionToken,omitempty"`
	// MandateID is the standing mandate that allowed the check, if one did.
	MandateID *string         `json:"mandateId,omitempty"`
	Approval  *approvals.Wire `json:"approval,omitempty"`
}

// NewAnswer serializes r; baseURL makes the raised approval's page url.
func NewAnswer(r *Result, baseURL string) Answer {
	c := r.Check
	out := Answer{Decision: c.Decision, CheckID: c.ID, Action: c.Action, Rule: wire.Optional(c.Rule), DecisionToken: c.DecisionToken,
		MandateID: c.MandateID}
	if r.Approval != nil {
		w := approvals.NewWire(r.Approval, baseURL)
		out.Approval = &w
	}
	return out
}
