package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// TestOrphanPastItsExpiryExpiresAtOnce: a record whose workflow the
// reconciler starts only after its expiry (its creating process died)
// is written as created and then expired at once, without waiting.
func TestOrphanPastItsExpiryExpiresAtOnce(t *testing.T) {
	h := newHarness(t)
	in := baseInput()
	in.ExpiresAt = start.Add(-time.Minute)
	s := h.run(in)
	assert.Equal(t, states.Expired, s.Status)
	assert.Equal(t, []string{workflows.ActionCreated, workflows.ActionExpired}, h.actions())
	assert.Equal(t, start, h.transitions[1].At, "expired at the start, not a moment later")
}
