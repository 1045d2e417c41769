package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	assert.NoError(t, Check(`request.risk == "high"`))
	assert.NoError(t, Check(`has(request.input.amount) && request.input.amount > 1000`))
	assert.ErrorContains(t, Check(`request.risk ==`), "does not compile")
	assert.ErrorContains(t, Check(`request.title + "x"`), "must yield a bool")
	assert.ErrorContains(t, Check(`nosuch.var`), "does not compile")
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
