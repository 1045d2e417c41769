// Package states names the states requests move through, one vocabulary
// for the workflows that enter them, the read model that stores them and
// the API that filters by them.
package states

// States of requests. An approval is pending until it settles as
// approved, rejected, expired or cancelled.
const (
	Pending   = "pending"
	Approved  = "approved"
	Rejected  = "rejected"
	Expired   = "expired"
	Cancelled = "cancelled"
)

// A request for information is open until it settles as complete,
// expired or cancelled.
const (
	Open     = "open"
	Complete = "complete"
)

// A review is open until it settles as approved, changes_requested,
// expired or cancelled.
const ChangesRequested = "changes_requested"

// Settled lists the states a request ends in.
var Settled = []string{Approved, Rejected, ChangesRequested, Complete, Expired, Cancelled}
