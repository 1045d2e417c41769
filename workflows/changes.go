package workflows

import "go.temporal.io/sdk/workflow"

// Changes answers a workflow's patches (workflow.GetVersion). The first
// GetVersion of each change in a run records a marker and upserts the
// TemporalChangeVersion search attribute: a history event and a write to
// Temporal's visibility store each, which an approval's create paid four
// times. A baseline is a version of the change a run asks first that
// stands for the versions of the others it lists, so a run begun since
// asks Temporal once; a run begun before it recorded a lower version, and
// asks each change as it comes, as it did. Being a version of that first
// change, it stops an older build at the run's first task (its GetVersion
// refuses a version above its own), where a marker of a new name would let
// it take the run down paths it does not have. A baseline's list is never
// edited (histories carry it): a later change is asked by its own id, or
// listed by a new baseline version.
type Changes struct {
	fixed map[string]workflow.Version
}

// Baseline asks Temporal for change, at the same point of every run, up
// to version baseline, and returns its version and what answers for the
// changes fixed lists in the runs at the baseline.
func Baseline(ctx workflow.Context, change string, baseline workflow.Version, fixed map[string]workflow.Version) (workflow.Version, Changes) {
	v := workflow.GetVersion(ctx, change, workflow.DefaultVersion, baseline)
	if v < baseline {
		return v, Changes{}
	}
	return v, Changes{fixed: fixed}
}

// Version is change's version in this run: the baseline's, when it lists
// the change, else GetVersion's, up to max.
func (c Changes) Version(ctx workflow.Context, change string, max workflow.Version) workflow.Version {
	if v, ok := c.fixed[change]; ok {
		return v
	}
	return workflow.GetVersion(ctx, change, workflow.DefaultVersion, max)
}
