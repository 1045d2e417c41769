package activities

import (
	"context"

	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/workflows"
)

// StartHold records that a held version's workflow took it up, so the
// reconciler leaves it alone.
func (a *Activities) StartHold(ctx context.Context, in workflows.PublishHoldInput) error {
	return a.Store.MarkHoldStarted(ctx, in.OrganizationID, in.VersionID)
}

// DecideHeld writes a held version's release or decline: the version, the
// report's live version when it goes live, the audit entry and the event.
// A retry of a decision already written changes nothing.
func (a *Activities) DecideHeld(ctx context.Context, o workflows.HoldOutcome) error {
	by := models.Actor{ID: o.ActorID, Name: o.ActorName}
	if o.Timeout {
		by = models.SystemActor
	}
	_, _, err := a.reports().DecideHeld(ctx, o.OrganizationID, o.VersionID, o.Decision == workflows.HoldRelease, by)
	return err
}

// ScheduleDue writes schedule.due for a schedule's run, once per moment.
func (a *Activities) ScheduleDue(ctx context.Context, e workflows.ScheduleDueEvent) error {
	_, err := a.reports().ScheduleDue(ctx, e.OrganizationID, e.ScheduleID, e.DueAt)
	return err
}

// StartSend records that a report send's workflow took it up, so the
// reconciler leaves it alone.
func (a *Activities) StartSend(ctx context.Context, in workflows.ReportSendInput) error {
	return a.Store.MarkSendStarted(ctx, in.OrganizationID, in.SendID)
}

// EmailSend emails a report send's recipients, each once.
func (a *Activities) EmailSend(ctx context.Context, in workflows.ReportSendInput) error {
	return a.Notify.ReportSend(ctx, in.OrganizationID, in.SendID)
}

// reports writes reports' versions and schedules' moments as the reports
// service does; the worker has no service.
func (a *Activities) reports() reports.Versions {
	return reports.Versions{Store: a.Store, BaseURL: a.BaseURL}
}
