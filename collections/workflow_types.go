package collections

import (
	"encoding/json"
	"time"

	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/workflows"
)

// WorkflowInput is what the collection workflow needs from the created
// record. The respondents are already resolved to person ids.
type WorkflowInput struct {
	workflows.RequestInput
	CollectionID      string
	Questions         []questions.Question
	RespondentIDs     []string
	RequiredResponses int
	// DueAt, when set, is when answers are wanted; the one reminder is
	// measured against it.
	DueAt *time.Time
}

// SubmitReplyRequest is one respondent's submitted answers, keyed by
// question id, as raw JSON. Drafts never reach the workflow.
type SubmitReplyRequest struct {
	workflows.Target
	RespondentID    string
	RespondentName  string
	RespondentEmail string
	Answers         map[string]json.RawMessage
}

// Reply is one submitted reply.
type Reply struct {
	RespondentID    string
	RespondentName  string
	RespondentEmail string
	SubmittedAt     time.Time
	// Answers are typed as their questions ask (questions.Check).
	Answers map[string]json.RawMessage
	// OnBehalfOf is whom the respondent stood in for, if anyone.
	OnBehalfOf *workflows.Delegator `json:",omitempty"`
}

// State is the workflow's view of a collection; every transition
// persists a copy.
type State struct {
	Status string
	// RespondentIDs are who may reply: the input's, less the people
	// removed since; RequiredResponses is lowered to match.
	RespondentIDs     []string
	RequiredResponses int
	Replies           []Reply
	ResponsesSoFar    int
	SettledAt         *time.Time
	// RemindedAt is when the one reminder went out.
	RemindedAt *time.Time
	// OnBehalfOf says, by delegate, whom each delegate asked stands in
	// for: the input's, and those added since (addDelegate).
	OnBehalfOf map[string]workflows.Delegator `json:",omitempty"`
}

func (s State) CurrentStatus() string { return s.Status }

// Transition is what PersistCollection writes.
type Transition = workflows.Transition[State]

// EmailRespondentsInput names the collection whose respondents are
// emailed: at creation every respondent, for the reminder those in
// PersonIDs (who had not submitted).
type EmailRespondentsInput struct {
	OrganizationID string
	CollectionID   string
	Reminder       bool
	PersonIDs      []string
}
