package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/workflows"
)

// stubState and stubKind are the least a kind gives the core.
type stubState struct{}

func (stubState) CurrentStatus() string { return "open" }

type stubKind struct{}

func (stubKind) CheckOpen() error { return nil }
func (stubKind) Asking() (*[]string, *map[string]workflows.Delegator) {
	return &[]string{}, &map[string]workflows.Delegator{}
}
func (stubKind) Acted() []string                 { return nil }
func (stubKind) NotAsked() string                { return "" }
func (stubKind) EmailAsked(workflow.Context)     {}
func (stubKind) Settle(workflow.Context, string) {}
func (stubKind) Removal() workflows.Removal      { return workflows.Removal{Update: "removeStub"} }
func (stubKind) CheckRemove(string) error        { return nil }
func (stubKind) Removed(workflow.Context, workflows.RemoveAskedRequest, *workflows.Transition[stubState]) bool {
	return false
}

// The order a kind's Update handlers are registered in decides which of
// the Updates waiting when its workflow starts runs first, so it is the
// order every saved history was made with: the core's cancel and
// addDelegate, the kind's own, then its removal.
func TestUpdatesAreRegisteredInTheOrderHistoriesWereMadeWith(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.ExecuteWorkflow(func(ctx workflow.Context) ([]string, error) {
		r := workflows.NewRequest[stubState](ctx, stubKind{}, "req_1", "org_1", "key_1", "PersistStub", stubState{})
		var names []string
		for _, u := range r.Updates(workflows.Update{Name: "decide"}, workflows.Update{Name: "ask"}) {
			names = append(names, u.Name)
		}
		return names, nil
	})
	require.NoError(t, env.GetWorkflowError())
	var names []string
	require.NoError(t, env.GetWorkflowResult(&names))
	assert.Equal(t, []string{workflows.UpdateCancel, workflows.UpdateAddDelegate, "decide", "ask", "removeStub"}, names)
}
