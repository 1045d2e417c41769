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
// input and caller, or -1 when none does. A condition that fails to
// evaluate (a field the input lacks, say) does not hold; its error is
// returned beside the result so it can be logged.
func FirstGateMatch(conditions []string, input any, caller map[string]string) (int, []error) {
	var errs []error
	vars := map[string]any{"input": input, "caller": caller}
	for i, c := range conditions {
		matched, err := matches(kindGate, c, vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("policy[%d]: %w", i, err))
			continue
		}
		if matched {
			return i, errs
		}
	}
	return -1, errs
}
