package approvals

import (
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Wire is an approval on the wire: the REST read, and the data of its
// webhooks and callbacks.
type Wire struct {
	wire.RequestHead
	Description string          `json:"description"`
	Risk        string          `json:"risk"`
	Factors     []models.Factor `json:"factors"`
	Links       []models.Link   `json:"links"`
	ReportID    *string         `json:"reportId"`
	Approvers   []string        `json:"approvers"`
	// ResolvedApprovers are the people who may decide it: those approvers
	// named, or the owners and administrators when it named nobody.
	ResolvedApprovers []wire.Person  `json:"resolvedApprovers"`
	ExpiresAt         wiretime.Time  `json:"expiresAt"`
	ExternalID        *string        `json:"externalId"`
	FlowID            *string        `json:"flowId"`
	Metadata          models.RawJSON `json:"metadata"`
	Input             models.RawJSON `json:"input"`
	EditableFields    []string       `json:"editableFields"`
	CallbackURL       *string        `json:"callbackUrl"`
	// CallbackSecret is set in the create response only.
	CallbackSecret *string `json:"callbackSecret,omitempty"`
	// RequiredApprovals and ApprovalsSoFar appear when a rule needs more
	// than one approval.
	RequiredApprovals *int             `json:"requiredApprovals,omitempty"`
	ApprovalsSoFar    *int             `json:"approvalsSoFar,omitempty"`
	DecidedBy         *string          `json:"decidedBy"`
	DecidedByID       *string          `json:"decidedById"`
	DecidedAt         *wiretime.Time   `json:"decidedAt"`
	Note              *string          `json:"note"`
	Reason            *string          `json:"reason"`
	ApprovedInput     models.RawJSON   `json:"approvedInput"`
	Changes           []models.Change  `json:"changes"`
	Questions         []WireQuestion   `json:"questions"`
	Concerns          []models.Concern `json:"concerns"`
	Escalation        *WireEscalation  `json:"escalation"`
	RequestedBy       string           `json:"requestedBy"`
	// RequestedByID is the key or member that asked, for a client to
	// check a request it finds is its own.
	RequestedByID string `json:"requestedById"`
	// Action names the registered action when the gate raised it.
	Action    *string       `json:"action,omitempty"`
	CreatedAt wiretime.Time `json:"createdAt"`
	UpdatedAt wiretime.Time `json:"updatedAt"`
	// DecisionToken, once approved, proves what was approved: a signed
	// token a tool verifies against approvedInput (package decisiontoken).
	DecisionToken *string `json:"decisionToken,omitempty"`
	// Execution is what its executor reported of running it; null until
	// reported.
	Execution *wire.Execution `json:"execution"`

	// DecidedOnBehalfOf and DecidedOnBehalfOfID name the person away whom
	// the decider stood in for (a delegation), or are null.
	DecidedOnBehalfOf   *string `json:"decidedOnBehalfOf"`
	DecidedOnBehalfOfID *string `json:"decidedOnBehalfOfId"`
}

// WireEscalation is an approval's escalation: after seconds, the people named
// in to become approvers too, at escalatedAt.
type WireEscalation struct {
	After       int            `json:"after"`
	To          []string       `json:"to"`
	EscalatedAt *wiretime.Time `json:"escalatedAt"`
}

// WireQuestion is a question on an approval and its answer (null until given).
type WireQuestion struct {
	QuestionID string         `json:"questionId"`
	Question   string         `json:"question"`
	AskedBy    string         `json:"askedBy"`
	AskedAt    wiretime.Time  `json:"askedAt"`
	Answer     *string        `json:"answer"`
	AnsweredAt *wiretime.Time `json:"answeredAt"`
}

// NewWireQuestion serializes q.
func NewWireQuestion(q *models.Question) WireQuestion {
	return WireQuestion{QuestionID: q.QuestionID, Question: q.Question, AskedBy: q.AskedBy, AskedAt: wiretime.New(q.AskedAt),
		Answer: q.Answer, AnsweredAt: wiretime.Ptr(q.AnsweredAt)}
}

// PageURL is the page approvers use.
func PageURL(baseURL, id string) string { return baseURL + models.RequestPage(Kind, id) }

// NewWire serializes a; baseURL makes the page url.
func NewWire(a *Approval, baseURL string) Wire {
	out := Wire{
		RequestHead: wire.NewRequestHead(Kind, &a.RequestBase, baseURL), Description: a.Description,
		Risk: a.Risk, Factors: wire.NonNil(a.Factors.V), Links: wire.NonNil(a.Links.V), ReportID: a.ReportID,
		Approvers: wire.NonNil(a.Approvers), ResolvedApprovers: make([]wire.Person, len(a.ResolvedApprovers)), ExpiresAt: wiretime.New(a.ExpiresAt), ExternalID: a.ExternalID, FlowID: a.FlowID,
		Metadata: a.Metadata, Input: a.Input, EditableFields: wire.NonNil(a.EditableFields), CallbackURL: a.CallbackURL,
		DecidedBy: a.DecidedBy, DecidedByID: a.DecidedByID, DecidedAt: wiretime.Ptr(a.DecidedAt), Note: a.Note,
		DecidedOnBehalfOf: a.DecidedOnBehalfOf, DecidedOnBehalfOfID: a.DecidedOnBehalfOfID,
		Reason: a.Reason, ApprovedInput: a.ApprovedInput, Changes: a.Changes.V,
		Questions: wire.All(a.Questions.V, NewWireQuestion), Concerns: wire.NonNil(a.Concerns.V), RequestedBy: a.RequestedBy, RequestedByID: a.Requester, Action: a.Action,
		CreatedAt: wiretime.New(a.CreatedAt), UpdatedAt: wiretime.New(a.UpdatedAt), Execution: wire.NewExecution(a.Execution),
	}
	for i, p := range a.ResolvedApprovers {
		out.ResolvedApprovers[i] = wire.Person(p)
	}
	if a.EscalationAfter != nil {
		out.Escalation = &WireEscalation{After: *a.EscalationAfter, To: wire.NonNil(a.EscalationTo), EscalatedAt: wiretime.Ptr(a.EscalatedAt)}
	}
	if a.Status == states.Approved {
		out.DecisionToken = a.DecisionToken
	}
	if a.RequiredApprovals > 1 {
		required, so := a.RequiredApprovals, a.ApprovalsSoFar
		out.RequiredApprovals, out.ApprovalsSoFar = &required, &so
	}
	return out
}

// NewCreated is a's create answer: its read, with the callback secret
// shown this once.
func NewCreated(a *Approval, baseURL string) Wire {
	out := NewWire(a, baseURL)
	out.CallbackSecret = a.CallbackSecret
	return out
}
