package collections

import (
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Kind is the request kind's name in search attributes, audit entries and
// callbacks.
const Kind = events.RequestCollection

// Names are what the shared paths call it by: its states and its workflow.
// A request for information is open until it settles as complete, expired
// or cancelled.
var Names = requests.Names{Kind: Kind, Workflow: WorkflowType,
	States: []string{states.Open, states.Complete, states.Expired, states.Cancelled}}

// The names a request for information's workflow is known by, as the
// worker registers them and its histories carry them: renaming one breaks
// the replay of every history that holds it.
const (
	// WorkflowType is the workflow's type name, which starts it
	// (requests.StartOnce).
	WorkflowType = "Collection"
	// UpdateSubmitReply is a respondent's submitted reply;
	// UpdateRemoveRespondent takes a removed guest off an open one.
	UpdateSubmitReply      = "submitReply"
	UpdateRemoveRespondent = "removeRespondent"
	// The activities, each its method's name (Activities): ActivityPersist
	// writes a transition, its audit entry and its event in one
	// transaction; ActivityEmailRespondents emails its respondents (at
	// creation, and the one reminder).
	ActivityPersist          = "PersistCollection"
	ActivityEmailRespondents = "EmailRespondents"
)

// WorkflowID is the workflow id of request for information id.
func WorkflowID(id string) string { return workflows.RequestWorkflowID(Kind, id) }
