package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/worker"
)

// TestVersionedWorkersTakeOverPendingRequests: an approval started by an
// unversioned worker (the previous release's) is taken over by a worker
// of build b1 once b1 makes itself the deployment's current version; a
// worker of build b2 then does the same, and the approval's decision runs
// on b2 with the unversioned and b1 workers still polling, auto-upgraded;
// once they stop, a request started runs on b2 from its first task.
func TestVersionedWorkersTakeOverPendingRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	c, namespace := temporalenv.ClientIn(t)
	quiet := slog.New(slog.DiscardHandler)
	run := func(d worker.Deployment) (stop func()) {
		w := worker.New(c, worker.Deps{Kinds: app.Workers(), Store: store, BaseURL: "http://assent.test", Logger: quiet, Deployment: d})
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
		if d.Name != "" {
			current, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			require.NoError(t, worker.MakeCurrent(current, c, namespace, d, quiet))
		}
		return w.Stop
	}
	svc := approvals.New(approvals.Deps{Store: store, Temporal: c, Logger: quiet})
	o := testenv.NewPeople(t, store, "agent")
	create := func() *approvals.Approval {
		a, err := svc.Create(ctx, o.Agent, &approvals.CreateInput{Fields: requests.Fields{Title: "Refund"}, Approvers: []string{"bob@example.com"}}, nil)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := svc.Get(ctx, o.ID, a.ID)
			return err == nil && got.Seq > 0
		}, 20*time.Second, 20*time.Millisecond, "the workflow writes its first step")
		return a
	}
	// The build and behaviour the approval's last task ran with.
	ranOn := func(id string) (string, enumspb.VersioningBehavior) {
		d, err := c.DescribeWorkflowExecution(ctx, approvals.WorkflowID(id), "")
		require.NoError(t, err)
		v := d.GetWorkflowExecutionInfo().GetVersioningInfo()
		return v.GetDeploymentVersion().GetBuildId(), v.GetBehavior()
	}

	stopUnversioned := run(worker.Deployment{})
	before := create()
	build, _ := ranOn(before.ID)
	assert.Empty(t, build, "an unversioned worker ran it")

	b1 := worker.Deployment{Name: "assent", BuildID: "b1"}
	stopB1 := run(b1)
	require.NoError(t, worker.MakeCurrent(ctx, c, namespace, b1, quiet), "a second call finds it current")
	b2 := worker.Deployment{Name: "assent", BuildID: "b2"}
	run(b2)
	desc, err := c.WorkerDeploymentClient().GetHandle("assent").Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	require.NoError(t, err)
	assert.Equal(t, "b2", desc.Info.RoutingConfig.CurrentVersion.BuildID)

	_, err = svc.Decide(ctx, o.ID, before.ID, "", o.Bob.Actor(), approvals.Decision{Decision: "approve"})
	require.NoError(t, err)
	build, behaviour := ranOn(before.ID)
	assert.Equal(t, "b2", build, "the pending approval's next task ran on the current build")
	assert.Equal(t, enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE, behaviour)

	// The roll ends: only b2 is left (creates start eagerly on a worker of
	// their own process, whatever its version, so the others go first).
	stopUnversioned()
	stopB1()
	after := create()
	build, behaviour = ranOn(after.ID)
	assert.Equal(t, "b2", build)
	assert.Equal(t, enumspb.VERSIONING_BEHAVIOR_AUTO_UPGRADE, behaviour)
}
