package webhooks

import "github.com/assent-hq/assent/models"

// The adapters name endpoints and deliveries by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	Endpoint        = models.WebhookEndpoint
	DeliveryFilter  = models.DeliveryFilter
	DeliveryLog     = models.DeliveryLog
	DeliveryAttempt = models.DeliveryAttempt
)

// An endpoint's formats.
const (
	FormatJSON  = models.FormatJSON
	FormatSlack = models.FormatSlack
	FormatTeams = models.FormatTeams
)

// SwitchOffAfter is how many consecutive failed attempts switch an
// endpoint off.
const SwitchOffAfter = models.SwitchOffAfter

// A delivery's statuses.
const (
	DeliveryPending   = models.DeliveryPending
	DeliveryDelivered = models.DeliveryDelivered
	DeliveryFailed    = models.DeliveryFailed
	DeliverySkipped   = models.DeliverySkipped
)

// DeliveryStatuses lists every delivery status, in the order a delivery
// log offers them as filters.
var DeliveryStatuses = models.DeliveryStatuses
