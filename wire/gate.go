package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Action is a registered action, as the admin API shows it.
type Action struct {
	ID                      string              `json:"id"`
	Name                    string              `json:"name"`
	Description             string              `json:"description"`
	InputSchema             models.RawJSON      `json:"inputSchema"`
	EditableFields          []string            `json:"editableFields"`
	Policy                  []models.PolicyRule `json:"policy"`
	DecisionTokenTTLSeconds *int                `json:"decisionTokenTtlSeconds"`
	Executors               []string            `json:"executors"`
	CreatedAt               wiretime.Time       `json:"createdAt"`
	UpdatedAt               wiretime.Time       `json:"updatedAt"`
}

// NewAction serializes a.
func NewAction(a *models.Action) Action {
	return Action{ID: a.ID, Name: a.Name, Description: a.Description, InputSchema: a.InputSchema,
		EditableFields: NonNil(a.EditableFields), Policy: NonNil(a.Policy.V), DecisionTokenTTLSeconds: a.DecisionTokenTTLSeconds,
		Executors: NonNil(a.Executors), CreatedAt: wiretime.New(a.CreatedAt), UpdatedAt: wiretime.New(a.UpdatedAt)}
}

// Caller is who put a question to the gate.
type Caller struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// GateCheck is a check the gate answered: the data of gate.denied.
type GateCheck struct {
	ID         string         `json:"id"`
	Action     string         `json:"action"`
	Decision   string         `json:"decision"`
	Rule       *string        `json:"rule"`
	Reason     *string        `json:"reason"`
	Input      models.RawJSON `json:"input"`
	ApprovalID *string        `json:"approvalId"`
	FlowID     *string        `json:"flowId"`
	ExternalID *string        `json:"externalId"`
	Caller     Caller         `json:"caller"`
	CreatedAt  wiretime.Time  `json:"createdAt"`
}

// NewGateCheck serializes c.
func NewGateCheck(c *models.GateCheck) GateCheck {
	return GateCheck{ID: c.ID, Action: c.Action, Decision: c.Decision, Rule: Optional(c.Rule), Reason: Optional(c.Reason),
		Input: c.Input, ApprovalID: c.ApprovalID, FlowID: c.FlowID, ExternalID: c.ExternalID,
		Caller: Caller{Kind: c.CallerKind, ID: c.CallerID, Name: c.CallerName}, CreatedAt: wiretime.New(c.CreatedAt)}
}

// Optional is s, or null on the wire when empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
