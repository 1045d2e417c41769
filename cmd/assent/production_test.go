package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
	"github.com/assent-hq/assent/workflows"
)

type proc struct {
	cmd  *exec.Cmd
	out  *testenv.Buffer
	done chan error
}

func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), out: &testenv.Buffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	require.NoError(t, p.cmd.Start())
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	return p
}

// stop sends SIGTERM and expects a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.done:
		require.NoError(t, err, "%s exited uncleanly; output:\n%s", p.cmd.Args[1], p.out.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop on SIGTERM", p.cmd.Args[1])
	}
}

func runJSON(t *testing.T, bin string, env []string, into any, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	require.NoError(t, err, "assent %v: %s", args, out)
	if into != nil {
		require.NoError(t, json.Unmarshal(out, into), "%s", out)
	}
}

// TestProductionShape runs assent temporal, migrate, serve and worker as
// separate processes against PostgreSQL.
func TestProductionShape(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	pg := testenv.PostgresURL(t)
	bin := assentbin.For(t)
	temporalPort, httpPort := freePort(t), freePort(t)
	env := []string{
		"ASSENT_BASE_URL=http://127.0.0.1:" + httpPort,
		"ASSENT_DATABASE_URL=" + pg,
		"ASSENT_TEMPORAL_ADDRESS=127.0.0.1:" + temporalPort,
		"ASSENT_TEMPORAL_NAMESPACE=default",
		"ASSENT_DATA_DIR=" + t.TempDir(),
		"ASSENT_SECRET_KEY=" + secretkey.Generate(),
	}

	temporal := start(t, bin, env, "temporal", "--temporal-port", temporalPort, "--temporal-ui-port", "0")
	require.Eventually(t, func() bool { return strings.Contains(temporal.out.String(), "Temporal UI") }, 60*time.Second, 50*time.Millisecond, "temporal output: %s", temporal.out.String())

	// serve refuses a database that was never migrated.
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "assent migrate")

	runJSON(t, bin, env, nil, "migrate")
	runJSON(t, bin, env, nil, "migrate") // idempotent
	var org struct{ ID string }
	runJSON(t, bin, env, &org, "admin", "org", "create", "--name", "Prod Co", "--plan", "free")
	// Only the operator sets an organisation's plan.
	var raised struct{ Plan string }
	runJSON(t, bin, env, &raised, "admin", "org", "update", "--org", org.ID, "--plan", "team")
	require.Equal(t, "team", raised.Plan)
	var key struct{ Key string }
	runJSON(t, bin, env, &key, "admin", "key", "create", "--name", "agent", "--kind", "agent", "--scopes", "approvals:read,approvals:write")
	require.True(t, strings.HasPrefix(key.Key, "asnt_agent_"))

	serve := start(t, bin, append(env, "ASSENT_HTTP_ADDR=127.0.0.1:"+httpPort), "serve")
	workerURL := "http://127.0.0.1:" + freePort(t)
	worker := start(t, bin, append(env, "ASSENT_WORKER_HTTP_ADDR="+strings.TrimPrefix(workerURL, "http://")), "worker")
	base := "http://127.0.0.1:" + httpPort
	require.Eventually(t, func() bool {
		resp, err := httpGet(base + "/readyz")
		return err == nil && resp == 200
	}, 60*time.Second, 100*time.Millisecond, "serve output: %s", serve.out.String())

	var me struct {
		Kind         string
		Organization struct{ ID string }
	}
	require.Equal(t, 200, getJSON(t, base+"/api/v1/me", key.Key, &me))
	assert.Equal(t, org.ID, me.Organization.ID)

	// The worker polls the assent task queue.
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:" + temporalPort, Namespace: "default"})
	require.NoError(t, err)
	defer c.Close()
	require.Eventually(t, func() bool {
		resp, err := c.WorkflowService().DescribeTaskQueue(context.Background(), &workflowservice.DescribeTaskQueueRequest{
			Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: workflows.TaskQueue}, TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY})
		return err == nil && len(resp.GetPollers()) > 0
	}, 30*time.Second, 200*time.Millisecond, "worker output: %s", worker.out.String())
	// Its probes and metrics are on its own listener.
	require.Eventually(t, func() bool {
		resp, err := httpGet(workerURL + "/readyz")
		return err == nil && resp == 200
	}, 30*time.Second, 100*time.Millisecond, "worker output: %s", worker.out.String())
	assert.Equal(t, 200, getJSON(t, workerURL+"/healthz", "", nil))
	assert.Contains(t, scrape(t, workerURL+"/metrics"), "temporal_long_request_total")

	// An approval created through serve is owned by a workflow on worker;
	// the expiry happens in worker and reaches serve's long-poll through
	// the database.
	var owner struct{ ID string }
	runJSON(t, bin, env, &owner, "admin", "member", "add", "--email", "owner@prod.example", "--role", "owner")
	var token struct{ Token string }
	runJSON(t, bin, env, &token, "admin", "token", "create", "--member", owner.ID)
	var created map[string]any
	expires := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	require.Equal(t, 201, postJSON(t, base+"/api/v1/approvals", key.Key, `{"title":"expire me","expiresAt":"`+expires+`"}`, &created))
	var expired map[string]any
	require.Equal(t, 200, getJSON(t, base+"/api/v1/approvals/"+created["id"].(string)+"?wait=30s", key.Key, &expired))
	assert.Equal(t, "expired", expired["status"], "worker output: %s", worker.out.String())
	require.Equal(t, 201, postJSON(t, base+"/api/v1/approvals", key.Key, `{"title":"approve me"}`, &created))
	var decided map[string]any
	require.Eventually(t, func() bool {
		return postJSON(t, base+"/api/v1/approvals/"+created["id"].(string)+"/decision", token.Token, `{"decision":"approve"}`, &decided) == 200
	}, 15*time.Second, 100*time.Millisecond)
	assert.Equal(t, "approved", decided["status"])

	// A worker of another instance, with another key, beside this one on
	// the same Temporal address and namespace, refuses to start.
	other := exec.Command(bin, "worker")
	other.Env = append(os.Environ(), append(env, "ASSENT_SECRET_KEY="+secretkey.Generate())...)
	out, err = other.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `Temporal namespace "default" belongs to another Assent instance`)
	assert.Contains(t, string(out), "ASSENT_TEMPORAL_NAMESPACE")

	// Logs are JSON lines.
	sc := bufio.NewScanner(strings.NewReader(serve.out.String()))
	for sc.Scan() {
		var line map[string]any
		assert.NoError(t, json.Unmarshal(sc.Bytes(), &line), "log line is not JSON: %s", sc.Text())
	}

	worker.stop(t)
	serve.stop(t)
	temporal.stop(t)
}

func httpGet(url string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
