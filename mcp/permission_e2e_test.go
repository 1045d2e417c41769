package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/mcp"
	assent "github.com/assent-hq/assent/sdk/go"
)

// Claude Code runs a tool denied for want of a decision again, with a new
// tool_use_id: the repeat uses the approval already asked, once, and the
// run after asks again. Over /mcp, as Claude Code's remote connection.
func TestPermissionPromptAsksOncePerUse(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	ctx := context.Background()
	agent := assent.New(d.BaseURL, d.AgentKey)
	admin := d.person(t, "admin")
	s := connect(t, d, "http", d.AgentKey)
	command := "make deploy ENV=" + tag("staging")
	args := func() map[string]any {
		return map[string]any{"tool_name": "Bash", "input": map[string]any{"command": command}, "tool_use_id": tag("toolu")}
	}
	answer := func(res *sdkmcp.CallToolResult) (behavior string, input map[string]any, message string) {
		t.Helper()
		var out struct {
			Behavior     string
			UpdatedInput map[string]any
			Message      string
		}
		require.NoError(t, json.Unmarshal([]byte(text(res)), &out), text(res))
		return out.Behavior, out.UpdatedInput, out.Message
	}

	// Nobody decides within the call: denied, saying what a repeat does.
	start := time.Now()
	behavior, _, message := answer(s.call(t, "permission_prompt", args(), nil))
	require.Equal(t, "deny", behavior)
	assert.GreaterOrEqual(t, time.Since(start), mcp.MaxWait*time.Second)
	assert.Contains(t, message, "Run the same tool with the same input again: that call waits on this approval")
	first, err := pendingApproval(agent, "Run Bash: "+command)
	require.NoError(t, err)
	require.NotEmpty(t, first, "the approval is titled with the command")
	assert.Contains(t, message, first)

	// Approved while the model was away: the repeat runs it as approved at
	// once, without asking again, and the use is recorded.
	_, err = admin.Approvals.Decide(ctx, first, &assent.DecisionCreate{Decision: "approve",
		Corrections: map[string]any{"command": "make deploy ENV=staging-2"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		a, err := agent.Approvals.Get(ctx, first)
		return err == nil && a.Status == "approved" && a.DecisionToken != ""
	}, 15*time.Second, 100*time.Millisecond)
	behavior, input, _ := answer(s.call(t, "permission_prompt", args(), nil))
	require.Equal(t, "allow", behavior)
	assert.Equal(t, map[string]any{"command": "make deploy ENV=staging-2"}, input)
	a, err := agent.Approvals.Get(ctx, first)
	require.NoError(t, err)
	require.NotNil(t, a.Execution, "its use is recorded")

	// Used once: the next identical call asks a person again.
	go func() {
		id, err := eventually("a second approval", func() (string, error) {
			list, err := agent.Approvals.ListPage(ctx, &assent.ListApprovalsParams{ExternalID: *a.ExternalID, Status: "pending"})
			if err != nil || len(list.Data) == 0 {
				return "", err
			}
			return list.Data[0].ID, nil
		})
		if assert.NoError(t, err) {
			_, err = admin.Approvals.Decide(ctx, id, &assent.DecisionCreate{Decision: "approve"})
			assert.NoError(t, err)
		}
	}()
	behavior, input, _ = answer(s.call(t, "permission_prompt", args(), nil))
	require.Equal(t, "allow", behavior)
	assert.Equal(t, map[string]any{"command": command}, input)
	list, err := agent.Approvals.ListPage(ctx, &assent.ListApprovalsParams{ExternalID: *a.ExternalID})
	require.NoError(t, err)
	require.Len(t, list.Data, 2, "two runs, two approvals")
	assert.NotNil(t, list.Data[0].Execution)
}
