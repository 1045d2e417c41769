package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
	"github.com/assent-hq/assent/models"
)

// productionMarker is the comment before the README's "Without Docker"
// block.
const productionMarker = "<!-- cmd/assent/readme_production_test.go runs this block as pasted"

// TestReadmeProductionRuns runs the README's "Without Docker" block as a
// person pastes it into a fresh shell (no ASSENT_* variable set), with the
// binary already built, its ports replaced by free ones and its database
// by one of the test's, and checks it leaves a usable instance: the agent
// key it printed creates an approval, the owner's token approves it, and
// the approval carries a decision token. Then it stops the processes and
// drops the database.
func TestReadmeProductionRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, tool := range []string{"bash", "curl", "createdb", "openssl", "tee"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("ASSENT_REQUIRE_README_TOOLS") == "1" {
				t.Fatalf("the README's production block needs %s, which is not installed (ASSENT_REQUIRE_README_TOOLS=1)", tool)
			}
			t.Skipf("the README's production block needs %s, which is not installed", tool)
		}
	}
	testenv.PostgresURL(t) // skips without PostgreSQL
	base := os.Getenv("ASSENT_TEST_DATABASE_URL")
	if base == "" {
		base = testenv.DefaultPostgresURL
	}
	if u, err := url.Parse(base); err != nil || u.Host != "127.0.0.1:5432" || u.User.Username() != "postgres" {
		t.Skipf("the README's block uses PostgreSQL at postgres@127.0.0.1:5432; the tests' is %s", base)
	}

	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	block := productionBlock(t, string(raw))
	bin := assentbin.For(t)

	// What the test changes, and only that: the build, the ports, the
	// database's name. Each must be in the block, so the README cannot
	// drift from what runs.
	httpPort, temporalPort, uiPort, workerPort := freePort(t), freePort(t), freePort(t), freePort(t)
	db := fmt.Sprintf("assent_readme_%d", time.Now().UnixNano())
	subst := []string{
		"GOTOOLCHAIN=auto go build -o assent ./cmd/assent", "cp " + bin + " assent",
		"createdb -h 127.0.0.1 -U postgres assent\n", "createdb -h 127.0.0.1 -U postgres " + db + "\n",
		"@127.0.0.1:5432/assent?", "@127.0.0.1:5432/" + db + "?",
		"127.0.0.1:8081", "127.0.0.1:" + httpPort,
		"127.0.0.1:8091", "127.0.0.1:" + workerPort,
		"ASSENT_TEMPORAL_PORT=7234", "ASSENT_TEMPORAL_PORT=" + temporalPort,
		"127.0.0.1:7234", "127.0.0.1:" + temporalPort,
		"ASSENT_TEMPORAL_UI_PORT=8234", "ASSENT_TEMPORAL_UI_PORT=" + uiPort,
	}
	for i := 0; i < len(subst); i += 2 {
		require.Contains(t, block, subst[i], "the README's production block changed; update this test's substitutions")
	}
	script := strings.NewReplacer(subst...).Replace(block)

	admin, err := models.Open(base)
	require.NoError(t, err)
	defer models.Close(admin)
	defer func() {
		// The processes are gone by now; FORCE ends any connection left.
		assert.NoError(t, admin.Exec("DROP DATABASE IF EXISTS "+db+" WITH (FORCE)").Error)
	}()

	// A fresh shell: none of the test's ASSENT_* settings.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASSENT_") {
			env = append(env, kv)
		}
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = work, env
	// Its own process group: the block leaves temporal, serve and worker
	// running, and the group stops them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A file, not a pipe: the processes left running keep writing to it,
	// and Wait would wait for a pipe's last writer.
	outFile, err := os.Create(filepath.Join(t.TempDir(), "output"))
	require.NoError(t, err)
	defer outFile.Close()
	cmd.Stdout, cmd.Stderr = outFile, outFile
	require.NoError(t, cmd.Start())
	defer stopGroup(cmd.Process.Pid)
	output := func() string {
		b, _ := os.ReadFile(outFile.Name())
		return string(b)
	}
	report := func() string { return "script:\n" + script + "\noutput:\n" + output() }
	require.NoError(t, cmd.Wait(), report())
	assert.Contains(t, output(), `"status":"ready"`, "the block ends with the instance ready\n%s", report())

	var made struct {
		Owner                          struct{ ID string }
		OwnerToken, AgentKey, AdminKey string
	}
	initJSON, err := os.ReadFile(filepath.Join(work, ".assent-prod", "init.json"))
	require.NoError(t, err, report())
	for _, name := range []string{".assent-prod", filepath.Join(".assent-prod", "init.json")} {
		info, err := os.Stat(filepath.Join(work, name))
		require.NoError(t, err)
		assert.Zero(t, info.Mode().Perm()&0o077, "%s holds secrets: its owner's alone (%s)", name, info.Mode().Perm())
	}
	require.NoError(t, json.Unmarshal(initJSON, &made), "%s", initJSON)

	api := "http://127.0.0.1:" + httpPort
	var created map[string]any
	require.Equal(t, 201, postJSON(t, api+"/api/v1/approvals", made.AgentKey, `{"title":"Refund order 42","input":{"amount":120}}`, &created), report())
	id := created["id"].(string)
	var decided map[string]any
	require.Eventually(t, func() bool {
		return postJSON(t, api+"/api/v1/approvals/"+id+"/decision", made.OwnerToken, `{"decision":"approve"}`, &decided) == 200
	}, 30*time.Second, 200*time.Millisecond, report())
	assert.Equal(t, "approved", decided["status"])
	var read map[string]any
	require.Eventually(t, func() bool {
		return getJSON(t, api+"/api/v1/approvals/"+id, made.AgentKey, &read) == 200 && read["decisionToken"] != nil
	}, 30*time.Second, 200*time.Millisecond, "the approval carries a decision token, issued by the base URL\n%s", report())
	assert.Equal(t, made.Owner.ID, read["decidedById"], "the owner decided")
	assert.NotContains(t, output(), "panic", report())
}

// productionBlock is the sh block after productionMarker.
func productionBlock(t *testing.T, readme string) string {
	t.Helper()
	i := strings.Index(readme, productionMarker)
	require.GreaterOrEqual(t, i, 0, "README.md marks its production block with %q", productionMarker)
	rest := readme[i:]
	start := strings.Index(rest, "\n```sh\n")
	require.GreaterOrEqual(t, start, 0, "an sh block follows the marker")
	rest = rest[start+len("\n```sh\n"):]
	end := strings.Index(rest, "\n```\n")
	require.GreaterOrEqual(t, end, 0, "the block ends")
	return rest[:end+1]
}
