package cluster

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Stop's steps take every process the cluster starts, each once, and
// PostgreSQL last.
func TestStopStepsTakeEveryProcess(t *testing.T) {
	all := map[string]bool{}
	for _, n := range Names() {
		all[n] = true
	}
	steps := stopSteps(all)
	assert.ElementsMatch(t, Names(), slices.Concat(steps...))
	assert.Equal(t, []string{Postgres}, steps[len(steps)-1])
	assert.Equal(t, []string{Proxy}, steps[0])
}
