package main

// The README's commands must work when pasted. This test runs every ```sh
// block of its "Quickstart" and "Webhooks" sections, in order, as one
// `bash -euo pipefail` script against a real `assent dev`, from the
// repository's root as the README says. An HTML comment on the line before
// a block changes how it runs:
//
//	<!-- readme-test: skip … -->
//	    not run (it starts the server the test starts itself);
//	<!-- readme-test: another terminal -->
//	    run at that point in a bash of its own, which shares no variables
//	    with the rest (so the block must define its own), and left running;
//	<!-- readme-test: another terminal, ready at "TEXT" -->
//	    the same, and the script goes on once the block has printed TEXT.
//
// The receiver's address (127.0.0.1:9000) and the data folder (.assent/)
// the README shows are replaced with the test's own; the API's address is
// read from the data folder's bootstrap.json, as the README does. The test needs curl and jq, as the README says; it
// skips without them unless ASSENT_REQUIRE_README_TOOLS=1.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/testenv"
)

// readmeBlock is one fenced sh block of the README and how it runs.
type readmeBlock struct {
	line    int    // where the block starts, for messages
	mode    string // "", "skip" or "another terminal"
	readyAt string // with "another terminal": the text that says it is up
	text    string
}

// readmeSections are the sections whose sh blocks the test runs.
var readmeSections = map[string]bool{"Quickstart": true, "Webhooks": true}

var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (skip\b.*|another terminal)(?:, ready at "([^"']+)")? -->$`)

// readmeBlocks reads the sh blocks of readmeSections from the README.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var (
		out      []readmeBlock
		section  string
		prev     string // the last non-blank line outside a block
		cur      *readmeBlock
		body     strings.Builder
		lineNo   int
		scan     = bufio.NewScanner(f)
		skipping bool // inside a fenced block that is not run
	)
	for scan.Scan() {
		lineNo++
		line := scan.Text()
		switch {
		case cur != nil && line == "```":
			cur.text = body.String()
			out = append(out, *cur)
			cur, prev = nil, ""
		case cur != nil:
			body.WriteString(line + "\n")
		case skipping:
			skipping = !strings.HasPrefix(line, "```")
		case strings.HasPrefix(line, "## "):
			section, prev = strings.TrimPrefix(line, "## "), ""
		case strings.HasPrefix(line, "```"):
			if line != "```sh" || !readmeSections[section] {
				skipping = true
				continue
			}
			cur = &readmeBlock{line: lineNo}
			body.Reset()
			if strings.HasPrefix(prev, "<!-- readme-test:") {
				m := readmeMarker.FindStringSubmatch(prev)
				require.NotNil(t, m, "README.md:%d: a readme-test comment this test does not know: %s", lineNo-1, prev)
				cur.mode, cur.readyAt = m[1], m[2]
				if strings.HasPrefix(cur.mode, "skip") {
					cur.mode = "skip"
				}
			}
		case strings.TrimSpace(line) != "":
			prev = strings.TrimSpace(line)
		}
	}
	require.NoError(t, scan.Err())
	require.Nil(t, cur, "README.md ends inside a fenced block")
	return out
}

// readmeTools skips the test, or fails it when they are required, unless
// the README's tools are installed.
func readmeTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq", "zip", "date"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("ASSENT_REQUIRE_README_TOOLS") == "1" {
				t.Fatalf("the README needs %s, which is not installed (ASSENT_REQUIRE_README_TOOLS=1)", tool)
			}
			t.Skipf("the README needs %s, which is not installed; set ASSENT_REQUIRE_README_TOOLS=1 to fail instead", tool)
		}
	}
}

func TestReadmeQuickstartRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts assent dev and builds the example receiver")
	}
	readmeTools(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))
	modes := map[string]int{}
	for _, b := range blocks {
		modes[b.mode]++
	}
	// Guard the parser: the README's runnable blocks and both kinds of
	// marker were found.
	require.GreaterOrEqual(t, modes[""], 5, "sh blocks found: %+v", modes)
	require.GreaterOrEqual(t, modes["another terminal"], 2, "sh blocks found: %+v", modes)
	require.Equal(t, 1, modes["skip"], "sh blocks found: %+v", modes)

	// The settings the Webhooks section restarts assent dev with.
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	t.Setenv("ASSENT_DEV_RETRY_UNIT", "1s")
	dataDir := filepath.Join(t.TempDir(), ".assent")
	_, _, _, stop := startDev(t, dataDir)
	defer stop()
	// The API's address is not replaced: the commands read it from
	// bootstrap.json, as they must for a dev on another port.
	ours := strings.NewReplacer("127.0.0.1:9000", "127.0.0.1:"+freePort(t), ".assent/", dataDir+"/")

	work := t.TempDir()
	var script strings.Builder
	var others []string // each other terminal's output file
	for i, b := range blocks {
		if b.mode != "skip" {
			assert.NotContains(t, b.text, "127.0.0.1:8080", "README.md:%d: the address comes from .assent/bootstrap.json", b.line)
		}
		text := ours.Replace(b.text)
		switch b.mode {
		case "skip":
			continue
		case "another terminal":
			file := filepath.Join(work, fmt.Sprintf("terminal-%d", i))
			require.NoError(t, os.WriteFile(file+".sh", []byte(text), 0o600))
			others = append(others, file+".out")
			fmt.Fprintf(&script, "# README.md:%d, in another terminal\nbash -euo pipefail %q > %q 2>&1 &\n", b.line, file+".sh", file+".out")
			if b.readyAt != "" {
				fmt.Fprintf(&script, "for _ in $(seq 900); do grep -qF -- '%s' %q && break; sleep 0.2; done\n", b.readyAt, file+".out")
				fmt.Fprintf(&script, "grep -qF -- '%s' %[2]q || { echo 'README.md:%d never printed %[1]s:'; cat %[2]q; exit 1; }\n", b.readyAt, file+".out", b.line)
			}
		default:
			fmt.Fprintf(&script, "# README.md:%d\n%s", b.line, text)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir = root
	// Its own process group, so the other terminals (the receiver, a
	// long-poll) are stopped with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var output testenv.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	require.NoError(t, cmd.Start())
	defer stopGroup(cmd.Process.Pid)
	runErr := cmd.Wait()

	otherOut := func(i int) string {
		b, _ := os.ReadFile(others[i])
		return string(b)
	}
	report := func() string {
		r := "script:\n" + script.String() + "\noutput:\n" + output.String()
		for i := range others {
			r += fmt.Sprintf("\nanother terminal %d:\n%s", i+1, otherOut(i))
		}
		return r
	}
	require.NoError(t, runErr, report())
	assert.NotContains(t, output.String(), `"error":{`, "no command was refused\n%s", report())

	// The long-poll in the other terminal learned the outcome, and the
	// receiver verified the approval's delivery and noticed its resend.
	require.Len(t, others, 2)
	assert.Eventually(t, func() bool { return strings.Contains(otherOut(0), `"status":"approved"`) },
		70*time.Second, 200*time.Millisecond, report())
	assert.Contains(t, otherOut(1), "verified approval.approved delivery dlv_", report())
	assert.Eventually(t, func() bool { return strings.Contains(otherOut(1), "seen before") },
		30*time.Second, 200*time.Millisecond, "the resend arrives\n%s", report())
	assert.NotContains(t, otherOut(1), "refused", report())
	assert.Contains(t, output.String(), `"recovered":0`, report())
	// The request for information completed with typed answers.
	assert.Contains(t, output.String(), `{"decision":"allowed","rule":"small","refused":null,"approval":null}`, report())
	assert.Contains(t, output.String(), `{"decision":null,"rule":null,"refused":"gate_denied","approval":null}`, report())
	assert.Contains(t, output.String(), `{"decision":"approval_required","rule":null,"refused":null,"approval":"apr_`, report())
	assert.Contains(t, output.String(), `"status": "complete"`, report())
	assert.Contains(t, output.String(), `"budget": 12000`, report())
	// The report: its ZIP published as version 1 with both files, a stale
	// publish refused, rollback and forward, a version declined with its
	// key redacted, and a held one released.
	assert.Contains(t, output.String(), `"files": 2`, report())
	assert.Contains(t, output.String(), `"version_conflict"`, report())
	assert.Contains(t, output.String(), `"status": "declined"`, report())
	assert.NotContains(t, output.String(), "AKIA"+"Z7QWERTYUIOPASDF", report())
	assert.Contains(t, output.String(), `{"version":4,"status":"live"}
{"version":3,"status":"declined"}
{"version":2,"status":"previous"}
{"version":1,"status":"previous"}`, report())
	// Shared by team name and display name, in any case; never public
	// from an agent key.
	assert.Contains(t, output.String(), `[{"kind":"team","name":"Operations"},{"kind":"member","name":"mia@example.com"}]`, report())
	assert.Contains(t, output.String(), `"public_sharing_denied"`, report())
}

// stopGroup ends a process group: politely first, so `go run` removes the
// binary it built, then for certain.
func stopGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	for range 50 {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
