package approvals_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// TestOrphanPastItsExpiryExpiresAtOnce: a record whose workflow the
// reconciler starts only after its expiry (its creating process died)
// is written as created and then expired at once, without waiting.
func TestOrphanPastItsExpiryExpiresAtOnce(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ExpiresAt = workflowtest.Start.Add(-time.Minute)
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionExpired}, h.Actions())
	assert.Equal(t, workflowtest.Start, h.Transitions[1].At, "expired at the workflowtest.Start, not a moment later")
}
