package workflows

import "go.temporal.io/sdk/workflow"

// Changes answers a workflow's patches (workflow.GetVersion). The first
// GetVersion of each change in a run records a marker and upserts the
// TemporalChangeVersion search attribute: a history event and a write to
// Temporal's visibility store each, which an approval's create paid four
// times. A baseline is one change id whose marker, recorded by every run
// begun since, stands for the versions it lists, so such a run asks
// Temporal once; a run begun before it has no baseline marker and asks
// each change as it comes, as it did. A baseline's list is never edited
// (histories carry it): a later change is asked by its own id, or listed
// by a new baseline.
type Changes struct {
	fixed map[string]workflow.Version
}

// Baseline asks Temporal for the baseline id once, at the same point of
// every run, and answers for the changes fixed lists in runs that have it.
func Baseline(ctx workflow.Context, id string, fixed map[string]workflow.Version) Changes {
	if workflow.GetVersion(ctx, id, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return Changes{}
	}
	return Changes{fixed: fixed}
}

// Version is change's version in this run: the baseline's, when it lists
// the change, else GetVersion's, up to max.
func (c Changes) Version(ctx workflow.Context, change string, max workflow.Version) workflow.Version {
	if v, ok := c.fixed[change]; ok {
		return v
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, max)
}
