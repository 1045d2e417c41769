package receipts

import "github.com/assent-hq/assent/models"

// Receipt is an execution receipt, named as the service names it for the
// adapters; models stays the persistence layer behind it.
type Receipt = models.Receipt
