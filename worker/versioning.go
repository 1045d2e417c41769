package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Deployment is the Temporal worker deployment a worker joins (Worker
// Versioning): the worker is version BuildID of deployment Name. The zero
// Deployment is an unversioned worker.
//
// Every workflow type auto-upgrades: the next task of a pending request
// goes to the deployment's current version, whatever build started it.
// None is pinned, because a request may wait for weeks and a pinned one
// would need its build kept running until it settled; workflow changes
// are patched instead (workflow.GetVersion), so any build of the current
// major continues any history (docs/operations.md, "Upgrading with
// requests pending").
type Deployment struct {
	Name, BuildID string
}

// options are the worker's options for d.
func (d Deployment) options() sdkworker.DeploymentOptions {
	if d.Name == "" {
		return sdkworker.DeploymentOptions{}
	}
	return sdkworker.DeploymentOptions{UseVersioning: true,
		Version:                   sdkworker.WorkerDeploymentVersion{DeploymentName: d.Name, BuildID: d.BuildID},
		DefaultVersioningBehavior: workflow.VersioningBehaviorAutoUpgrade}
}

// currentRetry is how often MakeCurrent looks again.
const currentRetry = 250 * time.Millisecond

// propagationWait bounds how long MakeCurrent waits for Temporal's task
// queues to route by a version made current. Propagation has been seen to
// stall for minutes under load; the build is current all the same, and a
// task that reaches another build meanwhile runs there (every build
// continues any history), so the worker starts rather than wait on it.
const propagationWait = 30 * time.Second

// MakeCurrent makes d's build the current version of its deployment in
// namespace and, when this call made it so, waits (up to propagationWait)
// until Temporal's task queues route by it: new requests and the next
// task of every pending one, unversioned or auto-upgrading, then go to
// this build. So a worker of a new build takes over as it starts, and one
// started again on an older build (a rollback) takes back. Temporal knows
// a version only once one of its workers has polled, so it tries again
// until the version is current or ctx ends.
func MakeCurrent(ctx context.Context, c client.Client, namespace string, d Deployment, log *slog.Logger) error {
	h := c.WorkerDeploymentClient().GetHandle(d.Name)
	var setAt time.Time // when this call made the build current
	for {
		resp, err := c.WorkflowService().DescribeWorkerDeployment(ctx,
			&workflowservice.DescribeWorkerDeploymentRequest{Namespace: namespace, DeploymentName: d.Name})
		if err == nil {
			info := resp.GetWorkerDeploymentInfo()
			switch {
			case info.GetRoutingConfig().GetCurrentDeploymentVersion().GetBuildId() != d.BuildID:
				_, err = h.SetCurrentVersion(ctx, client.WorkerDeploymentSetCurrentVersionOptions{BuildID: d.BuildID,
					ConflictToken: resp.GetConflictToken()})
				if err == nil {
					setAt = time.Now()
					log.Info("made this build the deployment's current version", "deployment", d.Name, "buildId", d.BuildID)
				}
			case setAt.IsZero() || info.GetRoutingConfigUpdateState() != enumspb.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS:
				// Current already (another worker of this build made it
				// so and waited), or routed by now.
				return nil
			case time.Since(setAt) > propagationWait:
				log.Warn("this build is the deployment's current version, but Temporal is still routing its task queues by it; "+
					"until it has, some tasks may run on other builds", "deployment", d.Name, "buildId", d.BuildID)
				return nil
			}
		}
		if err != nil {
			log.Debug("this build is not the deployment's current version yet", "deployment", d.Name, "buildId", d.BuildID, "error", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("make build %s the current version of worker deployment %s: %w (last: %v)", d.BuildID, d.Name, ctx.Err(), err)
		case <-time.After(currentRetry):
		}
	}
}
