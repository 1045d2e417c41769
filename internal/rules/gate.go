package rules

import "fmt"

// kindGate names the action gate's policy conditions among the compiled
// programs: CEL over `input` (the action's input) and `caller` (kind,
// id and name of whoever asks).
const kindGate = "gate"

// Gate outcomes.
const (
	GateAllow    = "allow"
	GateDeny     = "deny"
	GateApproval = "approval"
)

// GateOutcomes lists what a policy rule may decide.
var GateOutcomes = []string{GateAllow, GateDeny, GateApproval}

// CheckGate compiles a policy rule's condition (empty always holds); the
// error is a sentence for whoever wrote it.
func CheckGate(condition string) error {
	if condition == "" {
		return nil
	}
	_, err := program(kindGate, condition)
	return err
}

// FirstGateMatch returns the index of the first condition that holds for
// input and caller, or -1 when none does. The gate fails closed: a
// condition that cannot be evaluated (a field the input lacks, a value of
// another type) stops the search, and its index is returned with the
// error, so the caller does not let a later rule allow what it guarded.
func FirstGateMatch(conditions []string, input any, caller map[string]string) (int, error) {
	vars := map[string]any{"input": input, "caller": caller}
	for i, c := range conditions {
		matched, err := matches(kindGate, c, vars)
		if err != nil {
			return i, fmt.Errorf("policy[%d]: %w", i, err)
		}
		if matched {
			return i, nil
		}
	}
	return -1, nil
}
