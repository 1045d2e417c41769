package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/deploy/local/cluster"
)

// The drill itself, a backup under load restored into a new cluster, is
// crashtest's TestClusterRestore; these are the refusals that keep an
// operator from restoring over a cluster or without its key.
func TestBackupAndRestoreRefuseWhatWouldLoseData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	err := cluster.Backup(ctx, filepath.Join(dir, "nothing"), filepath.Join(dir, "backup"))
	assert.ErrorContains(t, err, "holds no cluster", "no cluster to back up")

	backup := filepath.Join(dir, "backup")
	require.NoError(t, os.MkdirAll(filepath.Join(backup, "postgres"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(backup, "postgres", "PG_VERSION"), []byte("15\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(backup, "blobs"), 0o700))

	existing := filepath.Join(dir, "existing")
	require.NoError(t, os.Mkdir(existing, 0o700))
	keys := filepath.Join(dir, "keys")
	require.NoError(t, os.Mkdir(keys, 0o700))
	assert.ErrorContains(t, cluster.Restore(ctx, backup, filepath.Join(dir, "new"), keys), "holds no secret key", "no cluster.json")
	require.NoError(t, os.WriteFile(filepath.Join(keys, "cluster.json"), []byte(`{"ports":{"postgres":5432}}`), 0o600))
	assert.ErrorContains(t, cluster.Restore(ctx, backup, filepath.Join(dir, "new"), keys), "holds no secret key")
	require.NoError(t, os.WriteFile(filepath.Join(keys, "cluster.json"), []byte(`{"secretKey":"a2V5","ports":{"postgres":5432}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(keys, "init.json"), []byte(`{"agentKey":"ak_1"}`), 0o600))
	assert.ErrorContains(t, cluster.Restore(ctx, backup, existing, keys), "already exists", "a restore never writes over a folder")
	assert.ErrorContains(t, cluster.Restore(ctx, existing, filepath.Join(dir, "new"), keys), "holds no PostgreSQL base backup")
	_, err = os.Stat(filepath.Join(dir, "new"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused restore makes nothing")

	restored := filepath.Join(dir, "restored")
	require.NoError(t, cluster.Restore(ctx, backup, restored, keys))
	state, err := os.ReadFile(filepath.Join(restored, "cluster.json"))
	require.NoError(t, err)
	assert.Contains(t, string(state), `"secretKey": "a2V5"`, "the restored cluster runs with the backed-up one's key")
	assert.Contains(t, string(state), `"postgres": 5432`, "where the backed-up one ran")
	init, err := os.ReadFile(filepath.Join(restored, "init.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"agentKey":"ak_1"}`, string(init), "and its first keys, which a second init would refuse to make")
	assert.FileExists(t, filepath.Join(restored, "postgres", "PG_VERSION"))
	assert.DirExists(t, filepath.Join(restored, "blobs"))
}
