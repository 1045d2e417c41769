package approvals

import (
	"encoding/json"
	"time"

	"github.com/assent-hq/assent/workflows"
)

// Decisions an approver gives.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// WorkflowInput is what the workflow needs from the created record. The
// approvers are already resolved to person ids (teams expanded once).
type WorkflowInput struct {
	workflows.RequestInput
	ApprovalID        string
	Risk              string
	RequiredApprovals int
	ApproverIDs       []string
	// RequesterMemberID is set when a person created the request with a
	// member token; that person may not approve it.
	RequesterMemberID string
	// Input is the input as the agent sent it: raw JSON, so numbers keep
	// their exact text through to approvedInput.
	Input          json.RawMessage
	EditableFields []string
	// InputSchema is the action's schema in older histories, whose
	// workflows held corrections to it. It is no longer set or read: the
	// approvals service holds corrections to the schema on the record
	// before deciding, so no replay compiles a schema.
	InputSchema json.RawMessage `json:",omitempty"`
	// ReasonRequired is set when an ethics rule matched.
	ReasonRequired bool
	// Screen is set when the organisation's model screen was on when the
	// workflow started: the approval is screened before anyone is asked.
	Screen bool `json:",omitempty"`
	// Escalation, when set, adds approvers if the approval is still
	// pending at its At.
	Escalation *ScheduledEscalation
}

// ScheduledEscalation is who joins an approval's approvers, and when, if nobody
// has settled it by then. The people were resolved at creation; who
// stands in for those of them away when it fires is read then
// (StandInsInput).
type ScheduledEscalation struct {
	At          time.Time
	ApproverIDs []string
}

// StandInsInput asks who stands in now for each of PersonIDs who is away,
// on a request Requester made (requests.Handover).
type StandInsInput struct {
	OrganizationID string
	Requester      string
	PersonIDs      []string
}

// StandInsResult is who stands in for each person away, in the order
// asked, each as the addDelegate Update would ask them; those not away
// are left out.
type StandInsResult struct {
	StandIns []workflows.AddDelegateRequest
}

// DecideRequest is one approver's decision.
type DecideRequest struct {
	workflows.Target
	ActorID   string
	ActorName string
	Decision  string
	Note      string
	Reason    string
	// Corrections are new values for editable fields, as raw JSON.
	Corrections map[string]json.RawMessage
	// Via says where the decision was made when not on Assent's own page
	// or API, for the timeline: "from Slack (Slack user U0123)".
	Via string
}

// AskRequest is an approver's question to the requester. The caller makes
// QuestionID so the workflow stays deterministic.
type AskRequest struct {
	workflows.Target
	ActorID    string
	ActorName  string
	QuestionID string
	Question   string
}

// AnswerRequest is the requester's answer.
type AnswerRequest struct {
	workflows.Target
	// Requester is whoever answers, identified as in WorkflowInput.
	Requester  string
	QuestionID string
	Answer     string
}

// AskedQuestion is a question on an approval.
type AskedQuestion struct {
	QuestionID string
	Question   string
	AskedBy    string
	// AskedByID is who gets the answer by email.
	AskedByID  string
	AskedAt    time.Time
	Answer     *string
	AnsweredAt *time.Time
}

// AppliedChange is one applied correction; From and To are raw JSON values.
type AppliedChange struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// State is the workflow's view of an approval; every transition
// persists a copy.
type State struct {
	Status string
	// ApproverIDs are who may decide: the input's, less the people removed
	// since, plus the defaults added when nobody left could settle it.
	ApproverIDs   []string
	ApprovedBy    []string
	Questions     []AskedQuestion
	DecidedByID   string
	DecidedByName string
	DecidedAt     *time.Time
	Note          string
	Reason        string
	// ApprovedInput is Input with the corrections applied (raw JSON); set
	// when the approval is approved.
	ApprovedInput  json.RawMessage
	Changes        []AppliedChange
	ApprovalsSoFar int
	// RemindedAt and EscalatedAt are when the one reminder and the
	// escalation happened.
	RemindedAt  *time.Time
	EscalatedAt *time.Time
	// ScreenConcerns are what the model screen raised; approving then
	// needs a written reason, as for an ethics rule's concern.
	ScreenConcerns []ScreenConcern `json:",omitempty"`
	// OnBehalfOf says, by delegate, whom each delegate asked stands in
	// for: the input's, and those added since (addDelegate).
	OnBehalfOf map[string]workflows.Delegator `json:",omitempty"`
	// DecidedOnBehalfOf is whom the decider stood in for, if anyone.
	DecidedOnBehalfOf *workflows.Delegator `json:",omitempty"`
}

// ScreenInput names the approval the model screen reads.
type ScreenInput struct {
	OrganizationID string
	ApprovalID     string
}

// ScreenConcern is a concern the model screen raised under one of the
// organisation's ethics principles.
type ScreenConcern struct {
	Principle string
	Concern   string
}

// ScreenResult is the model screen's answer: its concerns, or, when it did
// not ask the model (switched off since, no principle to screen against),
// Skipped saying why.
type ScreenResult struct {
	Concerns []ScreenConcern
	Skipped  string `json:",omitempty"`
}

func (s State) CurrentStatus() string { return s.Status }

// EmailApproversInput names the approval whose approvers are emailed:
// every approver not emailed yet, or for the reminder those in PersonIDs
// (who had not decided).
type EmailApproversInput struct {
	OrganizationID string
	ApprovalID     string
	Reminder       bool     `json:",omitempty"`
	PersonIDs      []string `json:",omitempty"`
}

// EmailAnswerInput names the answered question and who asked it.
type EmailAnswerInput struct {
	OrganizationID string
	ApprovalID     string
	QuestionID     string
	AskerID        string
}
