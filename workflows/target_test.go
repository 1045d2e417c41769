package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

func TestHoldDecisionsForAnotherVersionAreRefused(t *testing.T) {
	h := newHoldHarness()
	h.decide(time.Hour, "other", workflows.HoldDecision{Target: workflowtest.Other, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	h.decide(2*time.Hour, "none", workflows.HoldDecision{Target: workflowtest.None, Decision: workflows.HoldRelease, ActorID: "mem_a"})
	out := h.run(workflowtest.Start)
	assert.Equal(t, apperr.Forbidden, workflowtest.ErrType(h.Results["other"]))
	assert.Equal(t, apperr.Forbidden, workflowtest.ErrType(h.Results["none"]))
	assert.True(t, out.Timeout, "nobody released it: it was declined when its time ran out")
}
