package instance

import "github.com/assent-hq/assent/models"

// The instance's signing keys, as the adapters name them.
type (
	KeyFamily  = models.KeyFamily
	SigningKey = models.SigningKey
)

// The key families the instance publishes.
var (
	EvidenceKeys = models.EvidenceFamily
	DecisionKeys = models.DecisionFamily
)
