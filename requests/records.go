package requests

import "github.com/assent-hq/assent/models"

// The adapters name what every kind shares by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	// Page selects one page of any list: at most Limit rows after Cursor.
	Page          = models.Page
	Settled       = models.Settled
	HistoryFilter = models.HistoryFilter
	// InboxOrder is the order an inbox lists what waits on a person, and
	// Counts how many wait.
	InboxOrder = models.InboxOrder
	Counts     = models.Counts
	// WaitingKey is where a request waiting on a person sorts.
	WaitingKey = models.WaitingKey
)

// InboxOrders name the orders as the API and the pages take them.
var InboxOrders = models.InboxOrders

// The orders of an inbox: what needs attention first (the most severe
// risk, then the earliest due), or the most recently created first.
const (
	Attention = models.Attention
	Newest    = models.Newest
)

// The risk levels of a request, highest last.
const (
	RiskLow      = models.RiskLow
	RiskMedium   = models.RiskMedium
	RiskHigh     = models.RiskHigh
	RiskCritical = models.RiskCritical
)
