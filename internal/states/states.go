// Package states names the states requests move through, one vocabulary
// for the workflows that enter them, the read model that stores them and
// the API that filters by them.
package states

// States of requests. An approval is pending until it settles as
// approved, rejected, expired or cancelled (spec 3.1).
const (
	Pending   = "pending"
	Approved  = "approved"
	Rejected  = "rejected"
	Expired   = "expired"
	Cancelled = "cancelled"
)

// Approval lists every state of an approval.
var Approval = []string{Pending, Approved, Rejected, Expired, Cancelled}

// Settled lists the states a request ends in.
var Settled = []string{Approved, Rejected, Expired, Cancelled}
