package mcp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	assent "github.com/assent-hq/assent/sdk/go"
)

// A repeated call returns the request the same key made, never one
// another key made under the same externalId (which every read shows),
// even when that one is approved and the call carries expiresIn.
func TestRepeatAdoptsOnlyItsOwnRequest(t *testing.T) {
	t.Parallel()
	d := startDev(t)
	ctx := context.Background()
	admin := assent.New(d.BaseURL, d.AdminKey)
	approver := d.person(t, "admin")
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			other, err := admin.Admin.Keys.Create(ctx, &assent.KeyCreate{Kind: "agent", Name: tag("other agent"),
				Scopes: []string{"approvals:read", "approvals:write"}})
			require.NoError(t, err)
			victim := connect(t, d, tr, d.AgentKey)
			args := map[string]any{"title": tag("Refund"), "input": map[string]any{"amount": 10, "to": "customer-iban"},
				"expiresIn": 3600, "waitSeconds": 0}
			var first result
			res := victim.call(t, "request_approval", args, &first)
			require.False(t, res.IsError, text(res))
			require.Equal(t, "pending", first.Status)

			// Another key reads the externalId, makes its own approval with
			// it, and has it approved.
			attacker := assent.New(d.BaseURL, other.Key)
			seen, err := attacker.Approvals.Get(ctx, first.RequestID)
			require.NoError(t, err)
			require.NotNil(t, seen.ExternalID)
			assert.NotEqual(t, other.ID, seen.RequestedByID, "the wire names who asked")
			planted, err := attacker.Approvals.Create(ctx, &assent.ApprovalCreate{Title: "Refund",
				Input: map[string]any{"amount": 9000, "to": "attacker-iban"}, ExternalID: seen.ExternalID})
			require.NoError(t, err)
			assert.Equal(t, other.ID, planted.RequestedByID)
			_, err = approver.Approvals.Decide(ctx, planted.ID, &assent.DecisionCreate{Decision: "approve"})
			require.NoError(t, err)

			var again result
			res = victim.call(t, "request_approval", args, &again)
			require.False(t, res.IsError, text(res))
			assert.Equal(t, first.RequestID, again.RequestID, "the repeat is the victim's own request")
			assert.Equal(t, "pending", again.Status)
			assert.Empty(t, again.ApprovedInput)
			assert.NotContains(t, text(res), "attacker-iban")

			// Another honest agent making the same call gets its own
			// request, and its repeat finds that one.
			honest, err := admin.Admin.Keys.Create(ctx, &assent.KeyCreate{Kind: "agent", Name: tag("honest agent"),
				Scopes: []string{"approvals:read", "approvals:write"}})
			require.NoError(t, err)
			twin := connect(t, d, tr, honest.Key)
			var mine, mineAgain result
			res = twin.call(t, "request_approval", args, &mine)
			require.False(t, res.IsError, text(res))
			res = twin.call(t, "request_approval", args, &mineAgain)
			require.False(t, res.IsError, text(res))
			assert.NotContains(t, []string{first.RequestID, planted.ID}, mine.RequestID)
			assert.Equal(t, mine.RequestID, mineAgain.RequestID)
			assert.Equal(t, "pending", mineAgain.Status)
		})
	}
}
