package approvals

import (
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Kind is the request kind's name in search attributes, audit entries and
// callbacks.
const Kind = events.RequestApproval

// Names are what the shared paths call it by: its states and its workflow.
// An approval is pending until it settles as approved, rejected, expired
// or cancelled.
var Names = requests.Names{Kind: Kind, Workflow: WorkflowType,
	States: []string{states.Pending, states.Approved, states.Rejected, states.Expired, states.Cancelled}}

// The names an approval's workflow is known by, as the worker registers
// them and its histories carry them: renaming one breaks the replay of
// every history that holds it.
const (
	// WorkflowType is the workflow's type name; an approval's workflow is
	// started by it (requests.StartOnce), never by its function, whose
	// short name the kinds share.
	WorkflowType = "Approval"
	// UpdateDecide is a decision, UpdateAsk a question to the requester
	// and UpdateAnswer its answer; UpdateRemoveApprover takes a removed
	// guest off a pending approval.
	UpdateDecide         = "decide"
	UpdateAsk            = "ask"
	UpdateAnswer         = "answer"
	UpdateRemoveApprover = "removeApprover"
	// The activities, each its method's name (Activities): ActivityPersist
	// writes a transition, its audit entry and its event in one
	// transaction; ActivityEmailApprovers and ActivityEmailAnswer email
	// people about it; ActivityScreen asks the organisation's model screen
	// about a new approval.
	ActivityPersist        = "PersistApproval"
	ActivityEmailApprovers = "EmailApprovers"
	ActivityEmailAnswer    = "EmailAnswer"
	ActivityScreen         = "ScreenApproval"
)

// WorkflowID is the workflow id of approval id.
func WorkflowID(id string) string { return workflows.RequestWorkflowID(Kind, id) }
