package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/workflows"
)

var (
	apiLine = regexp.MustCompile(`API and pages\s+(\S+)`)
	uiLine  = regexp.MustCompile(`Temporal UI\s+(\S+)`)
)

// startDev runs `assent dev` in-process on free ports and returns the
// banner's API and UI addresses and a stop function that waits for a clean
// exit. extra are more flags.
func startDev(t *testing.T, dataDir string, extra ...string) (apiURL, uiURL, banner string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.Buffer
	done := make(chan error, 1)
	args := append([]string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0",
		"--temporal-port", "0", "--temporal-ui-port", "0", "--log-level", "warn"}, extra...)
	go func() { done <- run(ctx, args, &out, io.Discard) }()
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			t.Fatalf("assent dev exited early: %v", err)
		default:
		}
		return apiLine.MatchString(out.String())
	}, 90*time.Second, 50*time.Millisecond)
	banner = out.String()
	stop = func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err, "assent dev must shut down cleanly")
		case <-time.After(30 * time.Second):
			t.Fatal("assent dev did not stop within 30s")
		}
	}
	return apiLine.FindStringSubmatch(banner)[1], uiLine.FindStringSubmatch(banner)[1], banner, stop
}

func getJSON(t *testing.T, url, key string, into any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if into != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
	}
	return resp.StatusCode
}

// longPoll starts an agent's long-poll of url in the background and returns
// the wait for its answer, called from the test's own goroutine, and end,
// to defer once assent dev's stop is deferred: the background never
// touches t, and end closes the poll before assent dev stops, so a test
// that skips (no browser) or fails before the answer comes ends cleanly.
func longPoll[T any](t *testing.T, url, key string) (answer func() T, end func()) {
	type result struct {
		v      T
		status int
		err    error
	}
	done := make(chan result, 1)
	ctx, end := context.WithCancel(t.Context())
	go func() {
		var r result
		defer func() { done <- r }()
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if r.err = err; err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if r.err = err; err != nil {
			return
		}
		defer resp.Body.Close()
		r.status, r.err = resp.StatusCode, json.NewDecoder(resp.Body).Decode(&r.v)
	}()
	return func() T {
		t.Helper()
		select {
		case r := <-done:
			require.NoError(t, r.err, "the long-poll of %s", url)
			require.Equal(t, http.StatusOK, r.status)
			return r.v
		case <-time.After(70 * time.Second):
			t.Fatal("the long-poll did not return")
		}
		panic("unreachable")
	}, end
}

func TestDevBootstrapsOnceAndRestarts(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), ".assent")
	apiURL, uiURL, banner, stop := startDev(t, dataDir)

	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	assert.Equal(t, apiURL, boot.BaseURL)
	assert.Contains(t, banner, boot.AgentKey)
	assert.Contains(t, banner, "Created the demo organisation")
	assert.Regexp(t, `Loopback receivers\s+off: `, banner)
	assert.Regexp(t, `Short retries\s+off: `, banner)
	require.Len(t, boot.Members, 5)
	roles := map[string]int{}
	for _, m := range boot.Members {
		roles[m.Role]++
		assert.NotEmpty(t, m.Token)
	}
	assert.Equal(t, map[string]int{"owner": 1, "admin": 1, "member": 3}, roles)
	require.Len(t, boot.Teams, 1)
	info, err := os.Stat(filepath.Join(dataDir, bootstrapFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "bootstrap.json holds keys")

	var me struct {
		Kind         string
		Scopes       []string
		Organization struct{ ID string }
	}
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/me", boot.AgentKey, &me))
	assert.Equal(t, "agent", me.Kind)
	assert.Equal(t, boot.OrganizationID, me.Organization.ID)
	assert.ElementsMatch(t, scopes.Available(), me.Scopes, "the demo agent key holds every scope some endpoint requires, and no other")

	var memberMe struct{ Member struct{ Email string } }
	require.Equal(t, 200, getJSON(t, apiURL+"/api/v1/me", boot.Members[2].Token, &memberMe))
	assert.Equal(t, boot.Members[2].Email, memberMe.Member.Email)

	assert.Equal(t, 200, getJSON(t, apiURL+"/readyz", "", nil))
	resp, err := http.Get(uiURL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "the Temporal UI answers")
	var mail []any
	assert.Equal(t, 200, getJSON(t, apiURL+"/dev/mail.json", "", &mail))

	stop()

	// A restart keeps the data and does not bootstrap again; it listens on
	// another port, which bootstrap.json follows.
	apiURL2, _, banner2, stop2 := startDev(t, dataDir)
	defer stop2()
	assert.Contains(t, banner2, "Restarted with the existing data")
	boot2, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	assert.Equal(t, boot.OrganizationID, boot2.OrganizationID)
	require.NotEqual(t, apiURL, apiURL2)
	assert.Equal(t, apiURL2, boot2.BaseURL)
	assert.Equal(t, boot.AgentKey, boot2.AgentKey)
	require.Equal(t, 200, getJSON(t, apiURL2+"/api/v1/me", boot.AgentKey, &me))
	assert.Equal(t, boot.OrganizationID, me.Organization.ID)
	var members struct{ Data []any }
	require.Equal(t, 200, getJSON(t, apiURL2+"/api/v1/admin/members", boot.AdminKey, &members))
	assert.Len(t, members.Data, 5, "no second demo organisation")
}

// TestDevApprovalEndToEnd is the "done when" on `assent dev`: an
// agent creates an approval over HTTP, a person approves it with a
// correction, the agent's long-poll returns the outcome, and Temporal lists
// the workflow by its search attributes.
func TestDevApprovalEndToEnd(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out testenv.Buffer
	go func() {
		done <- run(ctx, []string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0",
			"--temporal-port", port, "--temporal-ui-port", "-1", "--log-level", "warn"}, &out, io.Discard)
	}()
	defer func() { cancel(); require.NoError(t, <-done) }()
	require.Eventually(t, func() bool { return apiLine.MatchString(out.String()) }, 90*time.Second, 50*time.Millisecond)
	apiURL := apiLine.FindStringSubmatch(out.String())[1]
	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)

	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:" + port, Namespace: "default"})
	require.NoError(t, err)
	defer c.Close()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(), &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	for name := range workflows.SearchAttributes() {
		assert.Contains(t, resp.GetCustomAttributes(), name)
	}

	var created map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey,
		`{"title":"Refund order 42","risk":"low","externalId":"order-42","input":{"amount":120,"currency":"EUR"},"editableFields":["amount"]}`, &created))
	id := created["id"].(string)

	polled, endPoll := longPoll[map[string]any](t, apiURL+"/api/v1/approvals/"+id+"?wait=30s", boot.AgentKey)
	defer endPoll()

	admin := demoMember(t, boot, "admin")
	var decided map[string]any
	require.Eventually(t, func() bool {
		// The first attempt may come before the workflow's first step.
		return postJSON(t, apiURL+"/api/v1/approvals/"+id+"/decision", admin.Token,
			`{"decision":"approve","corrections":{"amount":100}}`, &decided) == 200
	}, 15*time.Second, 100*time.Millisecond)

	got := polled()
	assert.Equal(t, "approved", got["status"])
	assert.Equal(t, map[string]any{"amount": 100.0, "currency": "EUR"}, got["approvedInput"])
	assert.Equal(t, []any{map[string]any{"field": "amount", "from": 120.0, "to": 100.0}}, got["changes"])

	query := "AssentStatus = 'approved' AND AssentExternalId = 'order-42' AND AssentOrganization = '" + boot.OrganizationID + "'"
	require.Eventually(t, func() bool {
		list, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", Query: query})
		return err == nil && len(list.GetExecutions()) == 1 && list.GetExecutions()[0].GetExecution().GetWorkflowId() == approvals.WorkflowID(id)
	}, 15*time.Second, 200*time.Millisecond, "the Temporal UI finds the workflow by its search attributes")
}

func postJSON(t *testing.T, url, key, body string, into any) int {
	t.Helper()
	return postJSONWithKey(t, url, key, "", body, into)
}

// postJSONWithKey is postJSON with an Idempotency-Key (none when empty).
func postJSONWithKey(t *testing.T, url, key, idempotencyKey, body string, into any) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(into))
	return resp.StatusCode
}
