package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/config"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/workflows"
)

// TestReplayedPayloadsAreRefused is finding 3 of issue 32 on the real
// stack (`assent dev`): a client that reaches Temporal without the key
// copies the encrypted payload of a real decision on approval A, and of a
// real administrator's cancel of approval C, onto approval B (risk
// critical, the same approver). Both are refused and B stays pending.
func TestReplayedPayloadsAreRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs assent dev")
	}
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	dataDir := filepath.Join(t.TempDir(), ".assent")
	temporalPort := freePort(t)
	apiURL, _, _, stop := startDev(t, dataDir, "--temporal-port", temporalPort, "--temporal-ui-port", "-1")
	defer stop()
	boot, err := loadBootstrap(dataDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The administrator approves and cancels through the API, as a person.
	db, err := models.Open("sqlite:" + filepath.Join(dataDir, "assent.db"))
	require.NoError(t, err)
	defer models.Close(db)
	keys, err := secretkey.LoadOrCreate(filepath.Join(dataDir, config.SecretKeyFile))
	require.NoError(t, err)
	admin := demoMember(t, boot, "admin")
	_, adminToken, err := models.NewStore(db, keys).CreateMemberToken(ctx, boot.OrganizationID, admin.ID)
	require.NoError(t, err)

	create := func(key, risk string) string {
		t.Helper()
		var a struct{ ID string }
		status := postJSONWithKey(t, apiURL+"/api/v1/approvals", boot.AgentKey, key,
			`{"title":"Pay the supplier","risk":"`+risk+`","approvers":["`+admin.Email+`"],"input":{"amount":100}}`, &a)
		require.Equal(t, http.StatusCreated, status, "%v", a)
		return a.ID
	}
	statusOf := func(id string) string {
		t.Helper()
		var a struct{ Status string }
		require.Equal(t, http.StatusOK, getJSON(t, apiURL+"/api/v1/approvals/"+id, boot.AgentKey, &a))
		return a.Status
	}
	approvalA, approvalB, approvalC := create("create-a", "medium"), create("create-b", "critical"), create("create-c", "medium")
	var out map[string]any
	require.Equal(t, http.StatusOK, postJSONWithKey(t, apiURL+"/api/v1/approvals/"+approvalA+"/decision", adminToken, "decide-a",
		`{"decision":"approve"}`, &out), "%v", out)
	require.Equal(t, http.StatusOK, postJSONWithKey(t, apiURL+"/api/v1/approvals/"+approvalC+"/cancel", adminToken, "cancel-c",
		`{}`, &out), "%v", out)
	require.Equal(t, "approved", statusOf(approvalA))
	require.Equal(t, "cancelled", statusOf(approvalC))

	// A client without the key: no codec, raw payloads.
	bare, err := client.Dial(client.Options{HostPort: "127.0.0.1:" + temporalPort, Namespace: "default"})
	require.NoError(t, err)
	defer bare.Close()
	decided := acceptedArgs(ctx, t, bare, approvals.WorkflowID(approvalA), approvals.UpdateDecide)
	cancelled := acceptedArgs(ctx, t, bare, approvals.WorkflowID(approvalC), workflows.UpdateCancel)

	// What a refusal says is encrypted too; the test reads it with the key.
	failures := payloadcodec.FailureConverter(payloadcodec.New(keys))
	for _, replay := range []struct {
		update string
		args   *commonpb.Payloads
	}{{approvals.UpdateDecide, decided}, {workflows.UpdateCancel, cancelled}} {
		resp, err := bare.WorkflowService().UpdateWorkflowExecution(ctx, &workflowservice.UpdateWorkflowExecutionRequest{
			Namespace:         "default",
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: approvals.WorkflowID(approvalB)},
			WaitPolicy:        &updatepb.WaitPolicy{LifecycleStage: enumspb.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED},
			Request: &updatepb.Request{
				Meta:  &updatepb.Meta{UpdateId: "replayed-" + replay.update, Identity: "no key"},
				Input: &updatepb.Input{Name: replay.update, Args: replay.args},
			},
		})
		require.NoError(t, err, replay.update)
		f := resp.GetOutcome().GetFailure()
		require.NotNil(t, f, "the replayed %s was refused", replay.update)
		// The codec refused it before any validator: bound to another
		// workflow. (Alone, the validator would refuse it too: it names
		// another approval; see workflows/target_test.go.)
		assert.ErrorContains(t, failures.FailureToError(f), payloadcodec.ErrMisplaced.Error(), replay.update)
	}
	assert.Equal(t, "pending", statusOf(approvalB), "the replayed decision and cancel changed nothing")
	for _, e := range historyOf(ctx, t, bare, approvals.WorkflowID(approvalB)) {
		assert.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED, e.GetEventType(), "nothing replayed reached B's history")
	}
}

// acceptedArgs are the encrypted arguments of the Update named name that
// workflow id's history accepted, as anyone reaching Temporal reads them.
func acceptedArgs(ctx context.Context, t *testing.T, c client.Client, id, name string) *commonpb.Payloads {
	t.Helper()
	for _, e := range historyOf(ctx, t, c, id) {
		if in := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput(); in.GetName() == name {
			require.Equal(t, "binary/encrypted", string(in.GetArgs().GetPayloads()[0].GetMetadata()["encoding"]))
			return in.GetArgs()
		}
	}
	t.Fatalf("%s accepted no %s", id, name)
	return nil
}
