package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/assent-hq/assent/workflows"
)

var start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// kindHarness runs one request kind's workflow (its state S) in the test
// environment, recording what its persistence activity writes and what
// each Update answered. Each kind's harness embeds it and records its own
// emails.
type kindHarness[S workflows.RequestState] struct {
	t           *testing.T
	env         *testsuite.TestWorkflowEnvironment
	mu          sync.Mutex
	transitions []workflows.Transition[S]
	results     map[string]result[S]
	workflow    any
	// id is the request run runs, which Updates are addressed to.
	id string
}

// result is what one Update answered: refused by its validator, or run
// with its error or the state it returned.
type result[S any] struct {
	state   S
	err     error
	refused bool
}

// newKindHarness registers workflow and a persistence activity named
// persist that records each transition.
func newKindHarness[S workflows.RequestState](t *testing.T, workflow any, persist string) *kindHarness[S] {
	var suite testsuite.WorkflowTestSuite
	h := &kindHarness[S]{t: t, env: suite.NewTestWorkflowEnvironment(), results: map[string]result[S]{}, workflow: workflow}
	h.env.SetStartTime(start)
	h.env.RegisterWorkflow(workflow)
	h.env.RegisterActivityWithOptions(func(_ context.Context, tr workflows.Transition[S]) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.transitions = append(h.transitions, tr)
		return nil
	}, activity.RegisterOptions{Name: persist})
	return h
}

// update sends an update at offset after the start and records its result
// under key.
func (h *kindHarness[S]) update(offset time.Duration, key, name string, args ...any) {
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(name, key, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { h.results[key] = result[S]{err: err, refused: true} },
			OnComplete: func(v any, err error) {
				r := result[S]{err: err}
				if s, ok := v.(S); ok {
					r.state = s
				}
				h.results[key] = r
			},
		}, addressedAll(h.id, args)...)
	}, offset)
}

// runAs runs the workflow with in, for request id, to its end, and returns
// its final state.
func (h *kindHarness[S]) runAs(id string, in any) S {
	h.id = id
	h.env.ExecuteWorkflow(h.workflow, in)
	require.True(h.t, h.env.IsWorkflowCompleted())
	require.NoError(h.t, h.env.GetWorkflowError())
	var s S
	require.NoError(h.t, h.env.GetWorkflowResult(&s))
	return s
}

// refusedWith requires the Update under key to have been refused with
// code, and returns the refusal.
func (h *kindHarness[S]) refusedWith(key, code string) *temporal.ApplicationError {
	h.t.Helper()
	r, ok := h.results[key]
	require.True(h.t, ok, "update %s never ran", key)
	require.Error(h.t, r.err, "update %s should be refused", key)
	assert.Equal(h.t, code, errType(r.err), "update %s: %v", key, r.err)
	var app *temporal.ApplicationError
	errors.As(r.err, &app)
	return app
}

// actions are the transitions' actions, in order.
func (h *kindHarness[S]) actions() []string {
	var out []string
	for _, t := range h.transitions {
		out = append(out, t.Action)
	}
	return out
}

func errType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}
