// Package workflows holds the core every request kind's workflow is built
// on (each kind's own is in its folder) and the workflows of no kind:
// deliveries, held versions, schedules and report sends. Workflow code
// never imports models, gorm or net/http and never reads the wall clock
// (TestWorkflowCodeImportsOnlyWhatReplays).
package workflows

import (
	"strconv"

	"github.com/assent-hq/assent/internal/events"
)

// This file holds every name the workflows are known by outside this
// package, and only names.

// TaskQueue is where every assent workflow and activity runs.
const TaskQueue = "assent"

// Workflow type names, as registered by the worker and carried by
// histories: the function's name here, the kind's for each kind's Workflow.
// A workflow is started by this name (requests.StartOnce), never by its
// function, whose short name two kinds share.
const (
	WorkflowApproval   = "Approval"
	WorkflowCollection = "Collection"
	WorkflowReview     = "Review"
	WorkflowDelivery   = "Delivery"
	WorkflowHold       = "PublishHold"
	// WorkflowScheduleDue is started by a report schedule's Temporal
	// Schedule.
	WorkflowScheduleDue = "ScheduleDue"
	WorkflowReportSend  = "ReportSend"
)

// ApprovalWorkflowID is the workflow id of approval id.
func ApprovalWorkflowID(id string) string { return "approval/" + id }

// CollectionWorkflowID is the workflow id of collection id.
func CollectionWorkflowID(id string) string { return "collection/" + id }

// ReviewWorkflowID is the workflow id of review id.
func ReviewWorkflowID(id string) string { return "review/" + id }

// RequestWorkflowID is the workflow id of the request of requestType
// (events.RequestApproval, …) id.
func RequestWorkflowID(requestType, id string) string {
	switch requestType {
	case events.RequestCollection:
		return CollectionWorkflowID(id)
	case events.RequestReview:
		return ReviewWorkflowID(id)
	}
	return ApprovalWorkflowID(id)
}

// HoldWorkflowID is the workflow id of held version id.
func HoldWorkflowID(versionID string) string { return "publish-hold/" + versionID }

// SendWorkflowID is the workflow id of report send id.
func SendWorkflowID(id string) string { return "report-send/" + id }

// ReportScheduleID is the id of the Temporal Schedule of report
// schedule id; ScheduleDueWorkflowID the id its runs start under (Temporal
// appends the time of each).
func ReportScheduleID(id string) string { return "report-schedule/" + id }

// ScheduleDueWorkflowID is the workflow id prefix of schedule id's runs.
func ScheduleDueWorkflowID(id string) string { return "schedule-due/" + id }

// DeliveryWorkflowID is the workflow id of one send of a delivery: one
// workflow per event and receiver, so the system never delivers an event
// twice of its own accord. Each send an administrator asks for (send > 0)
// is a run of its own.
func DeliveryWorkflowID(deliveryID string, send int) string {
	if send == 0 {
		return "delivery/" + deliveryID
	}
	return "delivery/" + deliveryID + "/send-" + strconv.Itoa(send)
}

// Update names the request workflows accept.
const (
	UpdateDecide = "decide"
	UpdateAsk    = "ask"
	UpdateAnswer = "answer"
	UpdateCancel = "cancel"
	// UpdateRemoveApprover takes a removed guest off a pending request.
	UpdateRemoveApprover = "removeApprover"
	// UpdateSubmitReply is a respondent's submitted reply.
	UpdateSubmitReply = "submitReply"
	// UpdateRemoveRespondent takes a removed guest off an open collection.
	UpdateRemoveRespondent = "removeRespondent"
	// UpdateVerdict is a reviewer's verdict; UpdateRemoveReviewer takes a
	// removed guest off an open review.
	UpdateVerdict        = "verdict"
	UpdateRemoveReviewer = "removeReviewer"
	// UpdateAddDelegate asks a request still waiting on someone whose
	// delegation just started to ask their delegate too (every kind).
	UpdateAddDelegate = "addDelegate"
	// UpdateDecideHold releases or declines a version the publish scan
	// held.
	UpdateDecideHold = "decideHold"
)

// Activity names.
const (
	// ActivityPersistApproval writes an approval transition, its audit
	// entry and its event to the database in one transaction.
	ActivityPersistApproval = "PersistApproval"
	// ActivityEmailApprovers and ActivityEmailAnswer email people about
	// an approval.
	ActivityEmailApprovers = "EmailApprovers"
	ActivityEmailAnswer    = "EmailAnswer"
	// ActivityScreenApproval asks the organisation's model screen about a
	// new approval.
	ActivityScreenApproval = "ScreenApproval"
	// ActivityStandIns reads who stands in now for people away, for an
	// approval's escalation.
	ActivityStandIns = "StandIns"
	// ActivityPersistCollection writes a collection transition like
	// ActivityPersistApproval; ActivityEmailRespondents emails its
	// respondents (at creation, and the one reminder).
	ActivityPersistCollection = "PersistCollection"
	ActivityEmailRespondents  = "EmailRespondents"
	// ActivityPersistReview writes a review transition like
	// ActivityPersistApproval; ActivityEmailReviewers emails its reviewers.
	ActivityPersistReview  = "PersistReview"
	ActivityEmailReviewers = "EmailReviewers"
	// ActivityDeliver makes one attempt to deliver one event to one
	// receiver.
	ActivityDeliver = "Deliver"
	// ActivityStartHold records that a held version's workflow took it
	// up; ActivityDecideHeld writes its release or decline.
	ActivityStartHold  = "StartHold"
	ActivityDecideHeld = "DecideHeld"
	// ActivityScheduleDue writes a report schedule's schedule.due.
	ActivityScheduleDue = "ScheduleDue"
	// ActivityStartSend records that a report send's workflow took it up;
	// ActivityEmailSend emails its recipients.
	ActivityStartSend = "StartSend"
	ActivityEmailSend = "EmailSend"
)
