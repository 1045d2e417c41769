package crashtest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// upgradeUnderLoad rolls the cluster from the previous release it was
// started on onto this checkout's assent, as docs/operations.md says an
// operator upgrades (cluster.Roll: migrate, then each worker, then each
// serve, SIGTERM and start, ready before the next), while the load l goes
// on. A rolling upgrade refuses nothing: no client of the load may meet
// a 5xx or a dropped connection from a moment before the roll began
// until a moment after it ended. What the load did across the roll, and
// every history either version wrote, is then held by the crash check
// like the rest of the run.
func upgradeUnderLoad(t *testing.T, c *cluster.Cluster, l *load) *upgradeFigures {
	time.Sleep(5 * time.Second) // the previous release takes part of the load
	require.Equal(t, []string{assentbin.Previous.Version}, runningVersions(t, c), "the cluster starts on the previous release")
	fiveXX, netErrors := l.fiveXX.Load(), l.netErrors.Load()
	began := time.Now()
	require.NoError(t, c.Migrate(context.Background(), assentbin.For(t)))
	migrated := time.Now()
	require.NoError(t, c.Roll(context.Background(), ""))
	fig := &upgradeFigures{From: assentbin.Previous.Version, RollSeconds: time.Since(began).Seconds()}
	require.NotContains(t, runningVersions(t, c), assentbin.Previous.Version, "every process rolled")
	fig.CurrentBuild = currentBuild(t, c)
	require.NotEmpty(t, fig.CurrentBuild, "the new workers made their build the worker deployment's current version")
	time.Sleep(3 * time.Second) // a retry the roll left waiting lands
	fig.FiveXX, fig.ConnectionErrors = l.fiveXX.Load()-fiveXX, l.netErrors.Load()-netErrors
	since := func(f failure) bool { return !f.at.Before(began) }
	// The migration ends the previous release's database sessions
	// (models.endSessionsOfEarlierReleases): what they were answering then
	// answers 503, which clients retry; nothing else may.
	ended := func(f failure) bool {
		return assentbin.Previous.SelectsStar && f.status == http.StatusServiceUnavailable && since(f) &&
			!f.at.After(migrated.Add(time.Second))
	}
	fig.SessionsEnded = l.failuresWhere(ended)
	fig.FiveXX -= int64(len(fig.SessionsEnded))
	fig.Failures = l.failuresWhere(func(f failure) bool { return since(f) && !ended(f) })
	l.mu.Lock()
	for _, o := range l.ops {
		if o.sent.Before(began) {
			fig.OpsBefore++
		} else if o.status != 0 {
			fig.OpsDuring++
		}
	}
	l.mu.Unlock()
	return fig
}

// upgradeFigures are what a rolling upgrade under load measured: the
// release it started from (its workers unversioned), the build its
// workers made current, how long the roll took, the operations sent
// before it and answered from its start to the kills, and the 5xx and
// connection errors the load met across it (each must be 0).
type upgradeFigures struct {
	From string `json:"from"`
	// CurrentBuild is the worker deployment's current version after it.
	CurrentBuild     string  `json:"currentBuild"`
	RollSeconds      float64 `json:"rollSeconds"`
	OpsBefore        int     `json:"opsBefore"`
	OpsDuring        int     `json:"opsDuring"`
	FiveXX           int64   `json:"responses5xx"`
	ConnectionErrors int64   `json:"connectionErrors"`
	// Failures say what each was, with its time (UTC).
	Failures []string `json:"failures,omitempty"`
	// SessionsEnded are the 503s of requests in flight on the previous
	// release when the migration ended its sessions, not in FiveXX.
	SessionsEnded []string `json:"sessionsEnded,omitempty"`
}

// runningVersions are the versions Assent's processes say they run, in
// their /readyz answers, each once.
func runningVersions(t *testing.T, c *cluster.Cluster) []string {
	a := c.Addresses()
	var out []string
	for _, base := range append(a.Serve, a.Workers...) {
		resp, err := http.Get(base + "/readyz")
		require.NoError(t, err)
		var ready struct{ Version string }
		err = json.NewDecoder(resp.Body).Decode(&ready)
		resp.Body.Close()
		require.NoError(t, err, "%s/readyz", base)
		if !slices.Contains(out, ready.Version) {
			out = append(out, ready.Version)
		}
	}
	return out
}

// currentBuild is the build id of the cluster's worker deployment's
// current version, "" when it has none.
func currentBuild(t *testing.T, c *cluster.Cluster) string {
	opts, err := c.TemporalClientOptions()
	require.NoError(t, err)
	tc, err := client.Dial(opts)
	require.NoError(t, err)
	defer tc.Close()
	resp, err := tc.WorkflowService().DescribeWorkerDeployment(context.Background(),
		&workflowservice.DescribeWorkerDeploymentRequest{Namespace: cluster.Namespace, DeploymentName: cluster.WorkerDeployment})
	require.NoError(t, err)
	return resp.GetWorkerDeploymentInfo().GetRoutingConfig().GetCurrentDeploymentVersion().GetBuildId()
}
