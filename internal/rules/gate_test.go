package rules

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFirstGateMatch(t *testing.T) {
	conditions := []string{
		`input.amount > 1000`,
		`caller.kind == "agent" && input.amount <= 100`,
		`has(input.note) && input.note == "urgent"`,
		``,
	}
	var input any
	caller := map[string]string{"kind": "agent", "id": "key_1", "name": "bot"}
	cases := []struct {
		input string
		want  int
	}{
		{`{"amount": 5000}`, 0},
		{`{"amount": 50}`, 1},
		{`{"amount": 500, "note": "urgent"}`, 2},
		{`{"amount": 500}`, 3},
	}
	for _, c := range cases {
		require.NoError(t, json.Unmarshal([]byte(c.input), &input))
		got, err := FirstGateMatch(conditions, input, caller)
		assert.Equal(t, c.want, got, c.input)
		assert.NoError(t, err, c.input)
	}
	// A condition that cannot be evaluated stops the search there: a later
	// rule never decides what it guarded.
	require.NoError(t, json.Unmarshal([]byte(`{"other": 1}`), &input))
	got, err := FirstGateMatch(conditions, input, caller)
	assert.Equal(t, 0, got)
	assert.ErrorContains(t, err, "policy[0]")
	require.NoError(t, json.Unmarshal([]byte(`{"amount": "12"}`), &input))
	_, err = FirstGateMatch(conditions, input, caller)
	assert.Error(t, err, "a string where a number was compared")
	got, err = FirstGateMatch(conditions[1:2], map[string]any{"amount": 5}, map[string]string{"kind": "member"})
	assert.Equal(t, -1, got)
	assert.NoError(t, err)
}

func TestCheckGate(t *testing.T) {
	assert.NoError(t, CheckGate(`input.amount > 10 && caller.name != "x"`))
	assert.NoError(t, CheckGate(``))
	assert.ErrorContains(t, CheckGate(`input.amount >`), "does not compile")
	assert.ErrorContains(t, CheckGate(`request.risk == "high"`), "does not compile", "only input and caller exist")
	assert.ErrorContains(t, CheckGate(`input.amount`), "must yield a bool")
	assert.ErrorContains(t, CheckGate(`caller.kind + 1 == 2`), "does not compile", "caller's values are strings")
}
