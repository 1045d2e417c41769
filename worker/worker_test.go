package worker_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/assent-hq/assent/worker"
)

// TestEveryWorkflowHasASavedHistory: each workflow type the worker
// registers has at least one saved history, which the workflows package's
// replay test replays on every run; without one, a change that breaks its
// runs in flight would go unnoticed.
func TestEveryWorkflowHasASavedHistory(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "histories", "*.json"))
	require.NoError(t, err)
	var saved []string
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		f.Close()
		require.NoError(t, err, file)
		saved = append(saved, history.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName())
	}
	for _, wf := range worker.Workflows {
		assert.True(t, slices.Contains(saved, wf.Name),
			"workflow %s has no saved history in workflows/testdata/histories: record one (see its README)", wf.Name)
	}
}
