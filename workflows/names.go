// Package workflows holds the core every request kind's workflow is built
// on (each kind's own is in its folder) and the workflows of no kind:
// deliveries, held versions, schedules and report sends. Workflow code
// never imports models, gorm or net/http and never reads the wall clock
// (TestWorkflowCodeImportsOnlyWhatReplays).
package workflows

import (
	"strconv"
)

// This file holds every name the workflows are known by outside this
// package, and only names.

// TaskQueue is where every assent workflow and activity runs.
const TaskQueue = "assent"

// Workflow type names of no kind, as registered by the worker and carried
// by histories (each kind's is its WorkflowType, in its folder's
// names.go).
const (
	WorkflowDelivery = "Delivery"
	WorkflowHold     = "PublishHold"
	// WorkflowScheduleDue is started by a report schedule's Temporal
	// Schedule.
	WorkflowScheduleDue = "ScheduleDue"
	WorkflowReportSend  = "ReportSend"
)

// RequestWorkflowID is the workflow id of the request of requestType
// (events.RequestApproval, …) id: approval/<id>, collection/<id>,
// review/<id>.
func RequestWorkflowID(requestType, id string) string { return requestType + "/" + id }

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

// Update names every request workflow accepts, and those of no kind (each
// kind's own are in its folder, names.go).
const (
	UpdateCancel = "cancel"
	// UpdateAddDelegate asks a request still waiting on someone whose
	// delegation just started to ask their delegate too (every kind).
	UpdateAddDelegate = "addDelegate"
	// UpdateDecideHold releases or declines a version the publish scan
	// held.
	UpdateDecideHold = "decideHold"
)

// Activity names of no kind (each kind's own are in its folder, names.go).
const (
	// ActivityStandIns reads who stands in now for people away, for an
	// approval's escalation.
	ActivityStandIns = "StandIns"
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
