package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// ScheduleDueInput names the schedule whose Temporal Schedule started
// this run.
type ScheduleDueInput struct {
	OrganizationID string
	ScheduleID     string
}

// ScheduleDueEvent is what ActivityScheduleDue writes: schedule.due for
// the moment the run started, which every retry carries alike.
type ScheduleDueEvent struct {
	ScheduleDueInput
	DueAt time.Time
}

// ScheduleDue is the workflow a report's Temporal Schedule starts each
// time it fires: it writes schedule.due, once for that moment.
func ScheduleDue(ctx workflow.Context, in ScheduleDueInput) error {
	ctx = workflow.WithActivityOptions(ctx, persistOptions)
	due := ScheduleDueEvent{ScheduleDueInput: in, DueAt: workflow.GetInfo(ctx).WorkflowStartTime.UTC()}
	return workflow.ExecuteActivity(ctx, ActivityScheduleDue, due).Get(ctx, nil)
}
