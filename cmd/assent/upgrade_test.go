package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/collections"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/assentbin"
	"github.com/assent-hq/assent/reviews"
	assent "github.com/assent-hq/assent/sdk/go"
	"github.com/assent-hq/assent/sdk/go/webhook"
	"github.com/assent-hq/assent/worker"
)

// TestUpgradeFromThePreviousRelease: the previous release, run as `assent
// dev` on each database, leaves requests of every kind waiting (and one
// approval settled); this version starts on its data (database and
// Temporal's), migrates, and settles each as before: decided, answered,
// reviewed, expired, each event delivered to the webhook and the callback;
// then every workflow history, made by either version, replays under this
// version's code.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release and runs assent dev twice")
	}
	t.Parallel()
	old, current := assentbin.Release(t), assentbin.For(t)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var database []string
			if kind == "postgres" {
				// A database of its own: another test's migration ends the
				// previous release's sessions in its database.
				database = []string{"--database-url", testenv.PostgresDatabaseURL(t)}
			}
			upgrade(t, old, current, database)
		})
	}
}

// pending are the requests the previous release leaves.
type pending struct {
	approval, expiring, decided, collection, review string
	callbackSecret                                  string
	mia                                             demoPerson
}

func upgrade(t *testing.T, old, current string, database []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dataDir := filepath.Join(t.TempDir(), ".assent")
	hooks := newHookReceiver(t)

	// The previous release makes them.
	oldURL, stopOld := startRelease(t, assentbin.Previous.Version, old, dataDir, database)
	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	p := leaveRequests(ctx, t, oldURL, boot, hooks)
	// Each workflow ran its first step under the previous release.
	for id, event := range map[string]string{p.approval: "approval.requested", p.collection: "collection.requested", p.review: "review.requested"} {
		hooks.await(t, event, id)
	}
	stopOld()

	// This version takes over the same data.
	temporalPort := freePort(t)
	newURL, stop := startRelease(t, "this version", current, dataDir, append([]string{"--temporal-port", temporalPort}, database...))
	defer stop()
	mia := assent.New(newURL, p.mia.Token)
	// Her inbox, migrated, lists what waits on her and not what she decided.
	waiting := map[string]bool{}
	for item, err := range mia.Inbox.Items(ctx, &assent.InboxParams{Limit: 200}) {
		require.NoError(t, err)
		switch {
		case item.Approval != nil:
			waiting[item.Approval.ID] = true
		case item.Collection != nil:
			waiting[item.Collection.ID] = true
		case item.Review != nil:
			waiting[item.Review.ID] = true
		}
	}
	assert.Equal(t, map[string]bool{p.approval: true, p.expiring: true, p.collection: true, p.review: true}, waiting)
	_, err = mia.Approvals.Decide(ctx, p.approval, &assent.DecisionCreate{Decision: "approve", Corrections: map[string]any{"amount": 90}})
	require.NoError(t, err)
	submit := true
	_, err = mia.Collections.Reply(ctx, p.collection, &assent.ReplyCreate{Answers: map[string]any{"ok": true}, Submit: &submit})
	require.NoError(t, err)
	_, err = mia.Reviews.Verdict(ctx, p.review, &assent.VerdictCreate{Verdict: "approved"})
	require.NoError(t, err)

	agent := assent.New(newURL, boot.AgentKey)
	a, err := agent.Approvals.Get(ctx, p.approval)
	require.NoError(t, err)
	assert.Equal(t, "approved", a.Status)
	assert.JSONEq(t, `{"amount":90,"supplier":"ACME"}`, mustJSON(t, a.ApprovedInput))
	c, err := agent.Collections.Get(ctx, p.collection)
	require.NoError(t, err)
	assert.Equal(t, "complete", c.Status)
	r, err := agent.Reviews.Get(ctx, p.review)
	require.NoError(t, err)
	assert.Equal(t, "approved", r.Status)
	d, err := agent.Approvals.Get(ctx, p.decided)
	require.NoError(t, err)
	assert.Equal(t, "approved", d.Status, "settled before the upgrade, read after it")
	// The expiry timer set by the previous release fires under this one.
	require.Eventually(t, func() bool {
		e, err := agent.Approvals.Get(ctx, p.expiring)
		return err == nil && e.Status == "expired"
	}, 90*time.Second, 250*time.Millisecond, "the approval due to expire")

	// Each outcome reaches the webhook, and the callback signed with the
	// secret the previous release issued.
	for id, event := range map[string]string{p.approval: "approval.approved", p.expiring: "approval.expired",
		p.collection: "collection.completed", p.review: "review.approved"} {
		hooks.await(t, event, id)
	}
	callback := hooks.awaitCallback(t, "approval.approved", p.approval)
	assert.NoError(t, webhook.Verify(callback.signature, callback.body, p.callbackSecret, time.Now(), 0))

	replayEvery(ctx, t, "127.0.0.1:"+temporalPort, dataDir, approvals.WorkflowID(p.approval), approvals.WorkflowID(p.expiring),
		approvals.WorkflowID(p.decided), collections.WorkflowID(p.collection), reviews.WorkflowID(p.review))
}

// leaveRequests makes, through the previous release at baseURL, a webhook
// and requests of every kind waiting on Mia, and an approval she decides.
func leaveRequests(ctx context.Context, t *testing.T, baseURL string, boot *bootstrap, hooks *hookReceiver) pending {
	t.Helper()
	p := pending{mia: demoMember(t, boot, "member")}
	agent, admin := assent.New(baseURL, boot.AgentKey), assent.New(baseURL, boot.AdminKey)
	endpoint, err := admin.Admin.Webhooks.Create(ctx, &assent.WebhookSettings{URL: hooks.URL + "/webhook"})
	require.NoError(t, err)
	hooks.setSecret(endpoint.Secret)

	callback := hooks.URL + "/callback"
	a, err := agent.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Pay the supplier", Approvers: []string{p.mia.Email},
		Input: map[string]any{"amount": 100, "supplier": "ACME"}, EditableFields: []string{"amount"}, CallbackURL: &callback})
	require.NoError(t, err)
	p.approval, p.callbackSecret = a.ID, a.CallbackSecret
	// Long enough to be waiting when the previous release stops, short
	// enough to expire while this test runs.
	expiresAt := time.Now().Add(25 * time.Second)
	e, err := agent.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Renew the certificate", Approvers: []string{p.mia.Email},
		ExpiresAt: &expiresAt})
	require.NoError(t, err)
	p.expiring = e.ID
	d, err := agent.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Order paper", Approvers: []string{p.mia.Email}})
	require.NoError(t, err)
	p.decided = d.ID
	_, err = assent.New(baseURL, p.mia.Token).Approvals.Decide(ctx, d.ID, &assent.DecisionCreate{Decision: "approve"})
	require.NoError(t, err)

	c, err := agent.Collections.Create(ctx, &assent.CollectionCreate{Title: "Is the stock counted?",
		Questions: []assent.CollectionQuestionCreate{{ID: "ok", Prompt: "Counted?", Kind: "boolean"}}, Respondents: []string{p.mia.Email}})
	require.NoError(t, err)
	p.collection = c.ID
	slug := "upgrade-report"
	_, err = agent.Reports.CreateFrom(ctx, &assent.ReportCreate{Title: "Stock report", Slug: &slug, Audience: []string{p.mia.Email}},
		assent.FromContent("<h1>Stock</h1>"))
	require.NoError(t, err)
	r, err := agent.Reviews.Create(ctx, &assent.ReviewCreate{Title: "Review the stock report", ReportID: slug, Reviewers: []string{p.mia.Email}})
	require.NoError(t, err)
	p.review = r.ID
	return p
}

// replayEvery replays every closed workflow's history on the embedded
// Temporal server at address under this version's workflows, through the
// payload codec with the data folder's key, once the workflows settled
// names have closed.
func replayEvery(ctx context.Context, t *testing.T, address, dataDir string, settled ...string) {
	t.Helper()
	keys, err := secretkey.LoadOrCreate(filepath.Join(dataDir, config.SecretKeyFile))
	require.NoError(t, err)
	codec := payloadcodec.New(keys)
	c, err := client.Dial(client.Options{HostPort: address, Namespace: "default", DataConverter: payloadcodec.DataConverter(codec),
		FailureConverter: payloadcodec.FailureConverter(codec)})
	require.NoError(t, err)
	defer c.Close()
	replayer, err := sdkworker.NewWorkflowReplayerWithOptions(sdkworker.WorkflowReplayerOptions{
		DataConverter: payloadcodec.DataConverter(codec), FailureConverter: payloadcodec.FailureConverter(codec)})
	require.NoError(t, err)
	for _, wf := range worker.Workflows(app.Workers()) {
		replayer.RegisterWorkflowWithOptions(wf.Func, workflow.RegisterOptions{Name: wf.Name})
	}
	for _, id := range settled {
		// Visibility lags; a workflow's own result does not.
		require.NoError(t, c.GetWorkflow(ctx, id, "").Get(ctx, nil), "%s closes", id)
	}
	replayed := map[string]bool{}
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", NextPageToken: token})
		require.NoError(t, err)
		if len(token) == 0 && !listsAll(page.GetExecutions(), settled) {
			// Not yet visible as closed: list again.
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, run := range page.GetExecutions() {
			if run.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				continue
			}
			id := run.GetExecution().GetWorkflowId()
			history := &historypb.History{}
			events := c.GetWorkflowHistory(ctx, id, run.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for events.HasNext() {
				e, err := events.Next()
				require.NoError(t, err, id)
				history.Events = append(history.Events, e)
			}
			require.NoError(t, replayer.ReplayWorkflowHistoryWithOptions(nil, history, sdkworker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id, RunID: run.GetExecution().GetRunId()}}), "%s replays", id)
			replayed[id] = true
		}
		if token = page.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	for _, id := range settled {
		assert.True(t, replayed[id], "%s replayed", id)
	}
}

// listsAll reports whether runs has each of ids closed.
func listsAll(runs []*workflowpb.WorkflowExecutionInfo, ids []string) bool {
	closed := map[string]bool{}
	for _, r := range runs {
		closed[r.GetExecution().GetWorkflowId()] = r.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	}
	for _, id := range ids {
		if !closed[id] {
			return false
		}
	}
	return true
}

// startRelease runs bin, the version named, as `assent dev` on dataDir
// (the environment's ASSENT_* settings left out; receivers on this machine
// allowed, delivery retries a second apart), and returns its address and a
// stop that waits for it to exit as an operator's stop would.
func startRelease(t *testing.T, version, bin, dataDir string, extra []string) (string, func()) {
	t.Helper()
	env := []string{"ASSENT_DEV_ALLOW_LOOPBACK=1", "ASSENT_DEV_RETRY_UNIT=1s"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASSENT_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin, append([]string{"dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--temporal-port", "0",
		"--temporal-ui-port", "-1", "--log-level", "warn"}, extra...)...)
	cmd.Env = env
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	found := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if m := apiLine.FindStringSubmatch(s.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			require.NoError(t, err, "%s must stop cleanly: %s", version, stderr.String())
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("%s did not stop within 30s", version)
		}
	}
	select {
	case url := <-found:
		return url, stop
	case err := <-exited:
		t.Fatalf("%s exited early: %v: %s", version, err, stderr.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("%s printed no address within 2 minutes: %s", version, stderr.String())
	}
	return "", nil
}

// hookReceiver records what the webhook endpoint (/webhook, its signature
// checked) and the callbacks (/callback) receive.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	secret   string
	received []delivered
}

type delivered struct {
	path, event, id, signature string
	body                       []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var envelope struct {
			Event string `json:"event"`
			Data  struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &envelope) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		signature := r.Header.Get(webhook.HeaderSignature)
		if r.URL.Path == "/webhook" && webhook.Verify(signature, body, h.secret, time.Now(), 0) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.received = append(h.received, delivered{path: r.URL.Path, event: envelope.Event, id: envelope.Data.ID, signature: signature, body: body})
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookReceiver) setSecret(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secret = s
}

func (h *hookReceiver) find(path, event, id string) (delivered, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.received {
		if d.path == path && d.event == event && d.id == id {
			return d, true
		}
	}
	return delivered{}, false
}

func (h *hookReceiver) await(t *testing.T, event, id string) {
	t.Helper()
	require.Eventually(t, func() bool { _, ok := h.find("/webhook", event, id); return ok }, time.Minute, 100*time.Millisecond,
		"the webhook receives %s of %s", event, id)
}

func (h *hookReceiver) awaitCallback(t *testing.T, event, id string) delivered {
	t.Helper()
	var d delivered
	require.Eventually(t, func() bool {
		var ok bool
		d, ok = h.find("/callback", event, id)
		return ok
	}, time.Minute, 100*time.Millisecond, "the callback receives %s of %s", event, id)
	return d
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
