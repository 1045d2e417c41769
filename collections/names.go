package collections

import "github.com/assent-hq/assent/workflows"

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
