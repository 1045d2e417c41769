package reviews

import (
	"time"

	"github.com/assent-hq/assent/workflows"
)

// Verdicts a reviewer returns.
const (
	VerdictApproved         = "approved"
	VerdictChangesRequested = "changes_requested"
)

// WorkflowInput is what the review workflow needs from the created record.
// The reviewers are already resolved to person ids.
type WorkflowInput struct {
	workflows.RequestInput
	ReviewID          string
	ReviewerIDs       []string
	RequiredApprovals int
}

// VerdictRequest is one reviewer's verdict.
type VerdictRequest struct {
	workflows.Target
	ReviewerID    string
	ReviewerName  string
	ReviewerEmail string
	Verdict       string
	Note          string
}

// Verdict is one verdict as the review keeps it.
type Verdict struct {
	ReviewerID    string
	ReviewerName  string
	ReviewerEmail string
	Verdict       string
	Note          string
	At            time.Time
	// OnBehalfOf is whom the reviewer stood in for, if anyone.
	OnBehalfOf *workflows.Delegator `json:",omitempty"`
}

// State is the workflow's view of a review; every transition
// persists a copy.
type State struct {
	Status string
	// ReviewerIDs are who may return a verdict: the input's, less the
	// people removed since, plus the defaults who joined then.
	ReviewerIDs       []string
	RequiredApprovals int
	Verdicts          []Verdict
	ApprovalsSoFar    int
	SettledAt         *time.Time
	// OnBehalfOf says, by delegate, whom each delegate asked stands in
	// for: the input's, and those added since (addDelegate).
	OnBehalfOf map[string]workflows.Delegator `json:",omitempty"`
}

func (s State) CurrentStatus() string { return s.Status }

// Transition is what PersistReview writes.
type Transition = workflows.Transition[State]

// EmailReviewersInput names the review whose reviewers are emailed.
type EmailReviewersInput struct {
	OrganizationID string
	ReviewID       string
}
