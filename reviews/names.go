package reviews

import (
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Kind is the request kind's name in search attributes, audit entries and
// callbacks.
const Kind = events.RequestReview

// Names are what the shared paths call it by: its states and its workflow.
// A review is open until it settles as approved, changes_requested,
// expired or cancelled.
var Names = requests.Names{Kind: Kind, Workflow: WorkflowType,
	States: []string{states.Open, states.Approved, states.ChangesRequested, states.Expired, states.Cancelled}}

// The names a review's workflow is known by, as the worker registers them
// and its histories carry them: renaming one breaks the replay of every
// history that holds it.
const (
	// WorkflowType is the workflow's type name, which starts it
	// (requests.StartOnce).
	WorkflowType = "Review"
	// UpdateVerdict is a reviewer's verdict; UpdateRemoveReviewer takes a
	// removed guest off an open review.
	UpdateVerdict        = "verdict"
	UpdateRemoveReviewer = "removeReviewer"
	// The activities, each its method's name (Activities): ActivityPersist
	// writes a transition, its audit entry and its event in one
	// transaction; ActivityEmailReviewers emails its reviewers.
	ActivityPersist        = "PersistReview"
	ActivityEmailReviewers = "EmailReviewers"
)

// WorkflowID is the workflow id of review id.
func WorkflowID(id string) string { return workflows.RequestWorkflowID(Kind, id) }
