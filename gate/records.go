package gate

import "github.com/assent-hq/assent/models"

// Action is a registered action, named as the gate names it for the
// adapters; models stays the persistence layer behind it.
type Action = models.Action

// Mandate is a standing mandate, with its usage.
type Mandate = models.Mandate

// The budget windows, as models names them (Budget.Window's oneof
// tag spells them too: a tag cannot name a constant).
const (
	WindowHour    = models.WindowHour
	WindowDay     = models.WindowDay
	WindowWeek    = models.WindowWeek
	WindowMandate = models.WindowMandate
)
