package requests

import (
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// The adapters name what every kind shares by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	// Page selects one page of any list: at most Limit rows after Cursor.
	Page = models.Page
	// Filter narrows a list of one kind's requests, by what every kind
	// has (RequestFilter) and what the kind adds.
	Filter        = models.Filter
	RequestFilter = models.RequestFilter
	Settled       = models.Settled
	HistoryFilter = models.HistoryFilter
	// InboxOrder is the order an inbox lists what waits on a person, and
	// Counts how many wait.
	InboxOrder = models.InboxOrder
	Counts     = models.Counts
	// WaitingKey is where a request waiting on a person sorts.
	WaitingKey = models.WaitingKey
)

// PageOf is the path of the page where people act on request id of kind.
func PageOf(kind, id string) string { return models.RequestPage(kind, id) }

// NounOf names kind where people read it: "request for information"; a
// kind this release does not know is named as it is.
func NounOf(kind string) string {
	if k, ok := models.KindNamed(kind); ok {
		return k.Noun
	}
	return kind
}

// InboxOrderOf reads an inbox's order as the API and the pages take it
// (attention or newest), or def when s is empty.
func InboxOrderOf(s string, def InboxOrder) (InboxOrder, error) {
	if s == "" {
		return def, nil
	}
	o, ok := models.InboxOrders[s]
	if !ok {
		return def, apperr.Field(apperr.InvalidRequest, "order", "order must be attention or newest")
	}
	return o, nil
}

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
