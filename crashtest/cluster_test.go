package crashtest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/deploy/local/cluster"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
)

// TestClusterCrashSafety runs the same load against the production shape
// (two serve behind the proxy, two worker, Temporal's services apart, a
// PostgreSQL of its own, mutual TLS to the frontend), started on the
// previous release and rolled onto this version under the load
// (upgradeUnderLoad). Then it SIGKILLs,
// at seeded moments, one of serve, worker, history, matching or the
// frontend and restarts it, and restarts PostgreSQL once. Then, the load
// still running, it backs the cluster up and restores the backup into a
// new cluster (restoreUnderLoad), and the check runs there. Receivers are
// reached as a production instance reaches receivers on its own network
// (ASSENT_RECEIVER_NETWORKS), with the production retry schedule, so the
// check waits past its first retry. The kills take every kind of process
// in a seeded order, each once before any twice; ASSENT_CLUSTER_KILLS sets
// how many (one of each kind unless set); the seed is ASSENT_CRASH_SEED's,
// as in TestCrashSafety. After the check, the restored cluster (on this
// version) shows what its set-up promises (clusterPromises).
func TestClusterCrashSafety(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds Temporal's server and runs the whole cluster under load")
	}
	victims := []string{cluster.Serve1, cluster.Serve2, cluster.Worker1, cluster.Worker2,
		cluster.TemporalHistory, cluster.TemporalMatching, cluster.TemporalFrontend}
	kills := envInt("ASSENT_CLUSTER_KILLS", len(victims))
	seed := crashSeed(t)
	t.Logf("cluster crash test: seed %d, %d kills and a restore (repeat with ASSENT_CRASH_SEED=%d ASSENT_CLUSTER_KILLS=%d)",
		seed, kills, seed, kills)

	ctx := context.Background()
	root := clusterDir(t)
	c, err := cluster.Start(ctx, cluster.Options{Dir: filepath.Join(root, "cluster"), TLS: true, Progress: logWriter{t},
		AssentEnv: receiversOnLoopback, Assent: assentbin.Release(t)})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	svc := &clusterTarget{c: c, boot: bootstrapCluster(t, c)}

	// The production schedule retries after 1 and then 4 minutes.
	rcv := newReceiver(t, 10, 6*time.Minute)
	l, stopLoad := startLoad(t, svc, rcv, seed, 8, time.Hour)
	upgrade := upgradeUnderLoad(t, c, l)
	killed := map[string]int{}
	rng := rand.New(rand.NewPCG(seed, 1000))
	postgresAt := rng.IntN(max(kills, 1))
	order := rng.Perm(len(victims))
	for k := range kills {
		time.Sleep(time.Duration(1500+rng.IntN(3500)) * time.Millisecond)
		name := victims[order[k%len(victims)]]
		t.Logf("kill %d of %d: %s", k+1, kills, name)
		require.NoError(t, c.Kill(name))
		killed[name]++
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
		require.NoError(t, c.Restart(ctx, name), "restart %s: %s", name, c.LogTail(name))
		if k == postgresAt {
			t.Logf("restarting PostgreSQL")
			require.NoError(t, c.RestartPostgres(ctx), c.LogTail(cluster.Postgres))
			killed["postgres (restart)"]++
		}
	}
	exited := c.Exits()
	restored, restore := restoreUnderLoad(t, c, filepath.Join(root, "backup"), filepath.Join(root, "restored"), l, rcv, stopLoad)
	killed["restore"]++
	r := l.finish(t, rcv, seed, killed, func(r *report) {
		for name, n := range restored.Exits() {
			exited[name] += n
		}
		r.ExitedOnTheirOwn, r.Upgrade, r.Restore = exited, upgrade, restore
	})
	if r.ServerErrors > 0 {
		// What each 500 was, as the serve processes logged it.
		for _, cl := range []*cluster.Cluster{c, restored} {
			for _, name := range []string{cluster.Serve1, cluster.Serve2} {
				for _, line := range cl.LogLines(name, "request failed") {
					t.Logf("%s: %s", name, line)
				}
			}
		}
	}
	assertNothingLost(t, r)
	assert.Zero(t, upgrade.FiveXX, "the rolling upgrade answered 5xx: %q", upgrade.Failures)
	assert.Zero(t, upgrade.ConnectionErrors, "the rolling upgrade dropped connections: %q", upgrade.Failures)
	assert.NotZero(t, upgrade.OpsBefore, "the previous release took no load: the upgrade proved nothing")
	assert.NotEmpty(t, restore.Lost, "nothing was acknowledged after the backup: the run showed nothing of what a restore loses")
	// Temporal's services may stop themselves when PostgreSQL restarts
	// during their own start, and are started again as an orchestrator
	// would; serve and worker ride out every fault.
	for _, name := range []string{cluster.Serve1, cluster.Serve2, cluster.Worker1, cluster.Worker2} {
		assert.Zero(t, r.ExitedOnTheirOwn[name], "%s exited on its own: %s", name, c.LogTail(name))
	}
	clusterPromises(t, restored, svc.keys().AgentKey)
}

// clusterPromises holds a cluster to what its set-up promises beyond the
// load: a worker given a CA that did not sign the frontend's certificate
// stops at once saying so, and twenty creates at once with one
// Idempotency-Key, ten to each serve, make one approval.
func clusterPromises(t *testing.T, c *cluster.Cluster, agentKey string) {
	wrongCA := filepath.Join(t.TempDir(), "ca.pem")
	other := httptest.NewTLSServer(http.NotFoundHandler())
	other.Close()
	require.NoError(t, os.WriteFile(wrongCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw}), 0o644))
	worker := exec.Command(c.AssentBinary(), "worker")
	worker.Env = append(append(os.Environ(), c.AssentEnv()...), "ASSENT_TEMPORAL_TLS_CA="+wrongCA)
	out, err := worker.CombinedOutput()
	require.Error(t, err, "a worker with the wrong CA started: %s", out)
	assert.Contains(t, string(out), "presented a certificate not signed by the CA in ASSENT_TEMPORAL_TLS_CA")

	answers := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			req, err := http.NewRequest("POST", c.Addresses().Serve[i%2]+"/api/v1/approvals", strings.NewReader(`{"title":"once"}`))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Authorization", "Bearer "+agentKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "one-create")
			var answer struct{ ID, Code string }
			status := 0
			if resp, err := http.DefaultClient.Do(req); err == nil {
				status = resp.StatusCode
				_ = json.NewDecoder(resp.Body).Decode(&answer)
				resp.Body.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == 201:
				answers[answer.ID]++
			case status == 409 && answer.Code == "idempotency_in_progress": // told to retry: not a second request
			default:
				answers[fmt.Sprintf("status %d: %s", status, answer.Code)]++
			}
		})
	}
	wg.Wait()
	assert.Len(t, answers, 1, "twenty creates with one key: %v", answers)
}

// receiversOnLoopback lets the cluster deliver to the test's receiver, as
// a production instance reaches receivers on its own network.
var receiversOnLoopback = []string{"ASSENT_RECEIVER_NETWORKS=127.0.0.0/8"}

// clusterDir is a folder for clusters, reachable by the postgres user when
// the test runs as root, kept when the test fails.
func clusterDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "assent-cluster-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the clusters' logs are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// clusterTarget is the production cluster as the load sees it: the
// proxy's address, its database and its Temporal.
type clusterTarget struct {
	c    *cluster.Cluster
	boot bootstrap
}

func (s *clusterTarget) url(path string) string { return s.c.Addresses().Assent + path }
func (s *clusterTarget) keys() bootstrap        { return s.boot }

func (s *clusterTarget) databaseURL() string {
	for _, kv := range s.c.AssentEnv() {
		if v, ok := strings.CutPrefix(kv, "ASSENT_DATABASE_URL="); ok {
			return v
		}
	}
	return ""
}

func (s *clusterTarget) temporal() (client.Options, *secretkey.Ring, error) {
	opts, err := s.c.TemporalClientOptions()
	if err != nil {
		return opts, nil, err
	}
	keys, err := secretkey.Parse(s.c.SecretKey())
	return opts, keys, err
}

// bootstrapCluster makes, with `up`'s first organisation and `assent
// admin` as an operator would, what assent dev's bootstrap holds: an
// organisation, its people with tokens, an agent key with every scope and
// an admin key.
func bootstrapCluster(t *testing.T, c *cluster.Cluster) bootstrap {
	admin := func(args ...string) map[string]any {
		t.Helper()
		out, err := c.Admin(context.Background(), args...)
		require.NoError(t, err)
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v), "%s", out)
		return v
	}
	// `up` makes the first organisation and its owner once, keeping what
	// it made for the operator alone; a second `up` finds the same.
	ctx := context.Background()
	made, err := c.Init(ctx, "Cluster Co", "owner@cluster.example")
	require.NoError(t, err)
	again, err := c.Init(ctx, "Another", "other@cluster.example")
	require.NoError(t, err)
	require.Equal(t, made, again)
	info, err := os.Stat(c.InitPath())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	var b bootstrap
	member := func(id, email, role, token string) {
		b.Members = append(b.Members, struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Role  string `json:"role"`
			Token string `json:"token"`
		}{id, email, role, token})
	}
	member(made.Owner.ID, made.Owner.Email, "owner", made.OwnerToken)
	for _, m := range []struct{ email, role string }{
		{"mia@cluster.example", "member"}, {"max@cluster.example", "member"}, {"maya@cluster.example", "member"},
	} {
		added := admin("member", "add", "--email", m.email, "--role", m.role)
		member(added["id"].(string), m.email, m.role, admin("token", "create", "--member", m.email)["token"].(string))
	}
	b.AgentKey = admin("key", "create", "--name", "agent", "--kind", "agent", "--scopes", strings.Join(scopes.Available(), ","))["key"].(string)
	b.AdminKey = admin("key", "create", "--name", "admin", "--kind", "admin")["key"].(string)
	return b
}

// logWriter logs the cluster's progress, each line with its time (UTC),
// to set beside the load's failures.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(time.Now().UTC().Format("15:04:05.000"), strings.TrimSpace(string(p)))
	return len(p), nil
}
