package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
)

// HoldTimeout is how long a held version waits for an owner or
// administrator before it is declined.
const HoldTimeout = 7 * 24 * time.Hour

// Hold decisions.
const (
	HoldRelease = "release"
	HoldDecline = "decline"
)

// PublishHoldInput names a version the publish scan held.
type PublishHoldInput struct {
	OrganizationID string
	VersionID      string
	// HeldAt is when the scan held it: the timeout counts from there, not
	// from the workflow's start, which the reconciler may have made later.
	HeldAt time.Time
}

// HoldDecision is an owner's or administrator's release or decline.
type HoldDecision struct {
	Target
	Decision  string
	ActorID   string
	ActorName string
}

// HoldOutcome is what became of a held version, as written by
// ActivityDecideHeld. Timeout is set when nobody decided in time.
type HoldOutcome struct {
	OrganizationID string
	VersionID      string
	HoldDecision
	Timeout bool
}

// PublishHold is the workflow of one held version: it waits for a release
// or decline (an Update) or HoldTimeout (then declines), and writes the
// outcome through an activity before the Update returns.
func PublishHold(ctx workflow.Context, in PublishHoldInput) (HoldOutcome, error) {
	out := HoldOutcome{OrganizationID: in.OrganizationID, VersionID: in.VersionID}
	var decided, written bool
	var writeErr error
	err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateDecideHold,
		func(ctx workflow.Context, d HoldDecision) (HoldOutcome, error) {
			out.HoldDecision, decided = d, true
			if err := workflow.Await(ctx, func() bool { return written }); err != nil {
				return out, err
			}
			return out, writeErr
		},
		workflow.UpdateHandlerOptions{Validator: Validator(in.VersionID, func(d HoldDecision) error {
			return checkHoldDecision(decided, out, d)
		})})
	if err != nil {
		return out, err
	}
	ctx = workflow.WithActivityOptions(ctx, persistOptions)
	if err := workflow.ExecuteActivity(ctx, ActivityStartHold, in).Get(ctx, nil); err != nil {
		return out, err
	}
	wait := in.HeldAt.Add(HoldTimeout).Sub(workflow.Now(ctx))
	if ok, err := workflow.AwaitWithTimeout(ctx, wait, func() bool { return decided }); err != nil {
		return out, err
	} else if !ok {
		decided, out.Timeout = true, true
		out.HoldDecision = HoldDecision{Decision: HoldDecline}
	}
	writeErr = workflow.ExecuteActivity(ctx, ActivityDecideHeld, out).Get(ctx, nil)
	written = true
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return out, err
	}
	return out, writeErr
}

// checkHoldDecision lets one decision through, release or decline; who may
// decide is the caller's check (owners and administrators).
func checkHoldDecision(decided bool, out HoldOutcome, d HoldDecision) error {
	if d.Decision != HoldRelease && d.Decision != HoldDecline {
		return Refuse(apperr.InvalidRequest, "a held version is released or declined, not %q", d.Decision)
	}
	if decided {
		if out.Timeout {
			return Refuse(apperr.InvalidState, "this version was declined: nobody released it within 7 days")
		}
		return Refuse(apperr.InvalidState, "this version was already %sd by %s", out.Decision, out.ActorName)
	}
	return nil
}
