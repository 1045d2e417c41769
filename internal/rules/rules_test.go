package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	assert.NoError(t, Check(KindApproval, `request.risk == "high"`))
	assert.NoError(t, Check(KindApproval, `has(request.input.amount) && request.input.amount > 1000`))
	assert.ErrorContains(t, Check(KindApproval, `request.risk ==`), "does not compile")
	assert.ErrorContains(t, Check(KindApproval, `request.title + "x"`), "must yield a bool")
	assert.ErrorContains(t, Check(KindApproval, `nosuch.var`), "does not compile")
}

func TestEvaluate(t *testing.T) {
	rs := []Rule{
		{Name: "big payments", Kind: KindApproval, Condition: `has(request.input.amount) && request.input.amount > 1000`, RequiredApprovals: 2},
		{Name: "critical", Kind: KindApproval, Condition: `request.risk == "critical"`, RequiredApprovals: 3},
		{Name: "personal data", Kind: KindEthics, Condition: `"email" in request.input`, Principle: "privacy", Concern: "sends personal data"},
		{Name: "salary", Kind: KindRestricted, Fields: []string{"salary", "iban"}},
		{Name: "broken", Kind: KindApproval, Condition: `request.input.missing > 1`, RequiredApprovals: 5},
	}
	out := Evaluate(rs, map[string]any{"risk": "high", "input": map[string]any{"amount": 5000.0, "email": "a@b.c"}})
	assert.Equal(t, 2, out.RequiredApprovals)
	require.Len(t, out.Concerns, 1)
	assert.Equal(t, Concern{Principle: "privacy", Rule: "personal data", Concern: "sends personal data"}, out.Concerns[0])
	assert.Equal(t, []string{"salary", "iban"}, out.RestrictedFields)
	require.Len(t, out.Errors, 1, "a rule that fails to evaluate does not match and is reported")
	assert.ErrorContains(t, out.Errors[0], "broken")

	out = Evaluate(rs, map[string]any{"risk": "critical", "input": map[string]any{}})
	assert.Equal(t, 3, out.RequiredApprovals)
	assert.Empty(t, out.Concerns)

	assert.Equal(t, 1, Evaluate(nil, map[string]any{}).RequiredApprovals)
}

// A sharing rule is about reports: approvals never see it, and it forbids
// the grants its condition matches, failing closed on an error.
func TestSharingRules(t *testing.T) {
	require.NoError(t, Check(KindSharing, "grant.kind == 'public'"))
	assert.Error(t, Check(KindSharing, "request.risk == 'high'"), "sharing rules see report and grant, not request")
	assert.Error(t, Check(KindApproval, "grant.kind == 'public'"))
	rs := []Rule{
		{Name: "never public", Kind: KindSharing, Condition: "grant.kind == 'public'"},
		{Name: "owners only", Kind: KindSharing, Condition: "grant.by.nope == 'x'"},
	}
	out := Evaluate(rs, map[string]any{"risk": "low"})
	assert.Empty(t, out.Errors, "approvals skip sharing rules")
	assert.Equal(t, 1, out.RequiredApprovals)
	report := map[string]any{"classification": "internal"}
	assert.Equal(t, "never public", Forbids(rs, report, map[string]any{"kind": "public", "by": map[string]any{}}))
	assert.Equal(t, "owners only", Forbids(rs, report, map[string]any{"kind": "team", "by": map[string]any{}}), "a rule that fails to evaluate forbids")
	assert.Equal(t, "", Forbids(rs[:1], report, map[string]any{"kind": "team", "by": map[string]any{}}))
}
