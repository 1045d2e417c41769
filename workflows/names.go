// Package workflows holds the Temporal workflows. It never imports models,
// gorm or net/http and never reads the wall clock.
package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// TaskQueue is where every assent workflow and activity runs.
const TaskQueue = "assent"

// Search attributes an operator filters requests by in the Temporal UI.
var (
	SearchOrganization = temporal.NewSearchAttributeKeyKeyword("AssentOrganization")
	SearchKind         = temporal.NewSearchAttributeKeyKeyword("AssentKind")
	SearchStatus       = temporal.NewSearchAttributeKeyKeyword("AssentStatus")
	SearchRisk         = temporal.NewSearchAttributeKeyKeyword("AssentRisk")
	SearchExternalID   = temporal.NewSearchAttributeKeyKeyword("AssentExternalId")
)

// SearchAttributes lists every custom search attribute with its type, for
// registration on a namespace.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	out := map[string]enumspb.IndexedValueType{}
	for _, k := range []temporal.SearchAttributeKeyKeyword{SearchOrganization, SearchKind, SearchStatus, SearchRisk, SearchExternalID} {
		out[k.GetName()] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	return out
}

// Update names the approval workflow accepts.
const (
	UpdateDecide = "decide"
	UpdateAsk    = "ask"
	UpdateAnswer = "answer"
	UpdateCancel = "cancel"
)

// ActivityPersistApproval writes an approval transition, its audit entry
// and its event to the database in one transaction.
const ActivityPersistApproval = "PersistApproval"

// ApprovalWorkflowID is the workflow id of approval id.
func ApprovalWorkflowID(id string) string { return "approval/" + id }

// Activities that email people about an approval.
const (
	ActivityEmailApprovers = "EmailApprovers"
	ActivityEmailAnswer    = "EmailAnswer"
)

// EmailApproversInput names the approval whose approvers are emailed.
type EmailApproversInput struct {
	OrganizationID string
	ApprovalID     string
}

// EmailAnswerInput names the answered question and who asked it.
type EmailAnswerInput struct {
	OrganizationID string
	ApprovalID     string
	QuestionID     string
	AskerID        string
}
