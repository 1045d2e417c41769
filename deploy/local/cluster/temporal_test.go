package cluster

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestDynamicConfigIsTheComposeStacks: the local cluster changes
// Temporal's defaults exactly as the compose stack's file does, so what
// the soak and the benchmarks measure is what an operator runs.
func TestDynamicConfigIsTheComposeStacks(t *testing.T) {
	compose, err := os.ReadFile("../../temporal/dynamicconfig/assent.yaml")
	require.NoError(t, err)
	var want, got map[string]any
	require.NoError(t, yaml.Unmarshal(compose, &want))
	require.NoError(t, yaml.Unmarshal([]byte(dynamicConfig), &got))
	assert.Equal(t, want, got)
	assert.Contains(t, got, "history.hostLevelCacheMaxSize", "the history cache is bounded")
}
