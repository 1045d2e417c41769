package instance_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/payloadcodec"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// temporal answers the health check with err, and the namespace's marker
// with marker's key id (none when empty).
type temporal struct {
	client.Client
	err    error
	marker string
}

func (t temporal) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if t.marker == "" || id != payloadcodec.MarkerWorkflowID {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	memo, err := converter.GetDefaultDataConverter().ToPayload(t.marker)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		Memo:   &commonpb.Memo{Fields: map[string]*commonpb.Payload{"assentKeyId": memo}},
	}}, nil
}

func (t temporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	if t.err != nil {
		return nil, t.err
	}
	return &client.CheckHealthResponse{}, nil
}

func TestReady(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())

		r := instance.New(store.SigningKeyStore, temporal{}, nil).Ready(ctx)
		assert.True(t, r.Ready)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "ok"}, r.Checks)

		r = instance.New(store.SigningKeyStore, nil, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "down: no client configured"}, r.Checks)

		r = instance.New(store.SigningKeyStore, temporal{err: errors.New("connection refused")}, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, "down: connection refused", r.Checks["temporal"])

		// The namespace marked for this instance's key, or another's.
		r = instance.New(store.SigningKeyStore, temporal{marker: store.Keys().CurrentID()}, nil).Ready(ctx)
		assert.True(t, r.Ready, "%v", r.Checks)
		r = instance.New(store.SigningKeyStore, temporal{marker: "0badc0de"}, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, "down: the namespace is marked for key 0badc0de, which ASSENT_SECRET_KEY lacks: another Assent instance uses it",
			r.Checks["temporal"])

		// A process that begins to stop is not ready, whatever else holds.
		stopping := instance.New(store.SigningKeyStore, temporal{}, nil)
		stopping.Stop()
		r = stopping.Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "ok", "process": "down: stopping"}, r.Checks)

		// The report file store is checked where the process has one.
		dir := filepath.Join(t.TempDir(), "blobs")
		blobs, err := blobstore.Open(ctx, "", dir)
		require.NoError(t, err)
		r = instance.New(store.SigningKeyStore, temporal{}, blobs).Ready(ctx)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "ok", "blobs": "ok"}, r.Checks)

		// A migration this binary knows and the database lacks (a newer
		// binary started before `assent migrate`).
		require.NoError(t, db.Exec("DELETE FROM migrations").Error)
		r = instance.New(store.SigningKeyStore, temporal{}, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, "down: the database schema is not current: run `assent migrate` first", r.Checks["database"])

		require.NoError(t, models.Close(db))
		r = instance.New(store.SigningKeyStore, temporal{}, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Contains(t, r.Checks["database"], "down: ")
		assert.Equal(t, "ok", r.Checks["temporal"])
	})
}

// S3-compatible storage that does not answer is down.
func TestReadyChecksS3(t *testing.T) {
	ctx := context.Background()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	gone, err := blobstore.Open(ctx, "s3://reports?region=us-east-1&endpoint=http://127.0.0.1:1&use_path_style=true", "")
	require.NoError(t, err)
	r := instance.New(store.SigningKeyStore, temporal{}, gone).Ready(ctx)
	assert.False(t, r.Ready)
	assert.Contains(t, r.Checks["blobs"], "down: ")
}

func TestKeySet(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := instance.New(store.SigningKeyStore, nil, nil)

		evidence, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, evidence, 1, "the family's first key is made when first asked for")
		again, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, again, 1)
		assert.Equal(t, evidence[0].ID, again[0].ID)

		rotated, err := store.RotateSigningKey(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		keys, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, keys, 2, "a retired key stays published, for what it signed")
		assert.Equal(t, evidence[0].ID, keys[0].ID)
		assert.NotNil(t, keys[0].RetiredAt)
		assert.Equal(t, rotated.ID, keys[1].ID)
		assert.Nil(t, keys[1].RetiredAt)

		decision, err := svc.KeySet(ctx, models.DecisionFamily)
		require.NoError(t, err)
		require.Len(t, decision, 1, "each family has keys of its own")
		assert.NotEqual(t, evidence[0].ID, decision[0].ID)
	})
}
