package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
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

	"github.com/assent-hq/assent/deploy/local/cluster"
)

// newDir is a folder the postgres user can reach when the test runs as
// root (t.TempDir's parents are private to the test's user).
func newDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "assent-cluster-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dir, 0o755))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the cluster's logs are kept in %s/logs", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// TestClusterUnderRestarts brings the production shape up with mutual TLS
// to Temporal's frontend, settles an approval through the proxy, then
// kills each kind of process and restarts PostgreSQL, and settles another
// after each.
func TestClusterUnderRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Temporal's server and runs the whole cluster")
	}
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Options{Dir: newDir(t), TLS: true, Progress: testWriter{t}})
	require.NoError(t, err)
	t.Cleanup(c.Stop)
	a := c.Addresses()

	// `up` makes the first organisation and its keys once, keeping them
	// for its owner alone; a second `up` finds the same.
	made, err := c.Init(ctx, "Cluster Co", "owner@cluster.example")
	require.NoError(t, err)
	require.NotEmpty(t, made.Organization.ID)
	again, err := c.Init(ctx, "Another", "other@cluster.example")
	require.NoError(t, err)
	assert.Equal(t, made, again)
	info, err := os.Stat(c.InitPath())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	agent, token := made.AgentKey, made.OwnerToken

	settle := func(step string) {
		t.Helper()
		// A 503 (a database connection the restart broke) is retried, with
		// the same Idempotency-Key, as the SDKs do.
		var created map[string]any
		require.Eventually(t, func() bool {
			return call(t, "POST", a.Assent+"/api/v1/approvals", agent, "settle "+step, `{"title":"after `+step+`"}`, &created) == 201
		}, time.Minute, 200*time.Millisecond, "create after %s: %v", step, created)
		id := created["id"].(string)
		var decided map[string]any
		require.Eventually(t, func() bool {
			return call(t, "POST", a.Assent+"/api/v1/approvals/"+id+"/decision", token, "", `{"decision":"approve"}`, &decided) == 200
		}, time.Minute, 200*time.Millisecond, "decide after %s", step)
		var read map[string]any
		require.Equal(t, 200, call(t, "GET", a.Assent+"/api/v1/approvals/"+id, agent, "", "", &read))
		assert.Equal(t, "approved", read["status"], step)
		assert.NotEmpty(t, read["decisionToken"], "%s: the worker signs a decision token", step)
	}
	settle("start")

	// The frontend speaks mutual TLS: a process given a CA that did not
	// sign its certificate stops at start, saying so.
	wrongCA := filepath.Join(t.TempDir(), "ca.pem")
	other := httptest.NewTLSServer(http.NotFoundHandler())
	other.Close()
	require.NoError(t, os.WriteFile(wrongCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Certificate().Raw}), 0o644))
	worker := exec.Command(c.AssentBinary(), "worker")
	worker.Env = append(append(os.Environ(), c.AssentEnv()...), "ASSENT_TEMPORAL_TLS_CA="+wrongCA)
	out, err := worker.CombinedOutput()
	require.Error(t, err, "a worker with the wrong CA started: %s", out)
	assert.Contains(t, string(out), "presented a certificate not signed by the CA in ASSENT_TEMPORAL_TLS_CA")

	// Twenty creates with one Idempotency-Key, spread over both serve
	// processes, make one request.
	ids := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out map[string]any
			status := call(t, "POST", a.Serve[i%2]+"/api/v1/approvals", agent, "one-create", `{"title":"once"}`, &out)
			mu.Lock()
			defer mu.Unlock()
			if status == 201 {
				ids[out["id"].(string)]++
			} else {
				ids[fmt.Sprintf("status %d: %v", status, out["code"])]++
			}
		}()
	}
	wg.Wait()
	for k := range ids {
		if strings.HasPrefix(k, "status 409: idempotency_in_progress") {
			delete(ids, k) // told to retry: not a second request
		}
	}
	assert.Len(t, ids, 1, "twenty creates with one key: %v", ids)

	for _, name := range []string{cluster.Worker1, cluster.Serve1, cluster.TemporalHistory, cluster.TemporalMatching, cluster.TemporalFrontend} {
		require.NoError(t, c.Kill(name))
		if name == cluster.Worker1 || name == cluster.Serve1 {
			settle("killing " + name) // the other one carries the load
		}
		require.NoError(t, c.Restart(ctx, name))
		settle("restarting " + name)
	}
	require.NoError(t, c.RestartPostgres(ctx))
	settle("restarting PostgreSQL")

	// A rolling restart, as a deploy does it: each worker, then each
	// serve, stopped (SIGTERM) and started again while approvals are
	// pending and an agent keeps reading them through the proxy. The
	// agent never sees anything but 200 and pending, and every approval
	// settles afterwards.
	var pending []string
	for i := range 4 {
		var created map[string]any
		require.Equal(t, 201, call(t, "POST", a.Assent+"/api/v1/approvals", agent, fmt.Sprintf("rolling %d", i), `{"title":"across a deploy"}`, &created))
		pending = append(pending, created["id"].(string))
	}
	rolled := make(chan struct{})
	var reads, unexpected []string
	go func() {
		defer close(rolled)
		for i := 0; ; i++ {
			select {
			case <-rolled:
				return
			default:
			}
			var read map[string]any
			id := pending[i%len(pending)]
			status := call(t, "GET", a.Assent+"/api/v1/approvals/"+id, agent, "", "", &read)
			reads = append(reads, id)
			if status != 200 || read["status"] != "pending" {
				unexpected = append(unexpected, fmt.Sprintf("GET %s: %d %v", id, status, read["status"]))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	require.NoError(t, c.Roll(ctx, ""))
	rolled <- struct{}{}
	<-rolled
	assert.NotEmpty(t, reads)
	assert.Empty(t, unexpected, "what the agent saw during the rolling restart")
	for _, id := range pending {
		var decided map[string]any
		require.Equal(t, 200, call(t, "POST", a.Assent+"/api/v1/approvals/"+id+"/decision", token, "", `{"decision":"approve"}`, &decided), "%v", decided)
		var read map[string]any
		require.Equal(t, 200, call(t, "GET", a.Assent+"/api/v1/approvals/"+id, agent, "", "", &read))
		assert.Equal(t, "approved", read["status"])
		assert.NotEmpty(t, read["decisionToken"], "a worker started in the roll signs")
	}
}

func call(t *testing.T, method, url, key, idempotencyKey, body string, into any) int {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if into != nil && len(bytes.TrimSpace(b)) > 0 {
		_ = json.Unmarshal(b, into)
	}
	return resp.StatusCode
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
