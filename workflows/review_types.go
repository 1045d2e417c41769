package workflows

import "time"

// Verdicts a reviewer returns (spec 2.2).
const (
	VerdictApproved         = "approved"
	VerdictChangesRequested = "changes_requested"
)

// ReviewInput is what the review workflow needs from the created record.
// The reviewers are already resolved to person ids.
type ReviewInput struct {
	ReviewID          string
	OrganizationID    string
	ExternalID        string
	ReviewerIDs       []string
	RequiredApprovals int
	// Requester is who created the review (a member id, or the key id for
	// an agent).
	Requester string
	ExpiresAt time.Time
}

// VerdictRequest is one reviewer's verdict.
type VerdictRequest struct {
	Target
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
}

// ReviewState is the workflow's view of a review; every transition
// persists a copy.
type ReviewState struct {
	Status            string
	ReviewerIDs       []string
	RequiredApprovals int
	Verdicts          []Verdict
	ApprovalsSoFar    int
	SettledAt         *time.Time
}

// ReviewTransition is what PersistReview writes: the new state, the audit
// entry and, when Event is set, the event for the outbox.
type ReviewTransition struct {
	ReviewID       string
	OrganizationID string
	Action         string
	Event          string
	ActorID        string
	ActorName      string
	// Seq numbers the workflow's transitions from 1 (see ApprovalTransition).
	Seq    int
	Detail string
	At     time.Time
	State  ReviewState
}

// EmailReviewersInput names the review whose reviewers are emailed.
type EmailReviewersInput struct {
	OrganizationID string
	ReviewID       string
}
