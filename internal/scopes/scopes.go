// Package scopes names the permissions an agent key or member token carries.
package scopes

import "slices"

// The spec's scope names (section 5), plus the ones it leaves open; see
// docs/decisions.md.
const (
	ApprovalsRead    = "approvals:read"
	ApprovalsWrite   = "approvals:write"
	ReviewsRead      = "reviews:read"
	ReviewsWrite     = "reviews:write"
	CollectionsRead  = "collections:read"
	CollectionsWrite = "collections:write"
	FlowsRead        = "flows:read"
	FlowsWrite       = "flows:write"
	ReportsRead      = "reports:read"
	ReportsWrite     = "reports:write"
	ReportsShare     = "reports:share"
	CommentsWrite    = "comments:write"
	AudiencesRead    = "audiences:read"
	SchedulesWrite   = "schedules:write"
)

// All lists every scope, in a stable order.
var All = []string{
	ApprovalsRead, ApprovalsWrite,
	ReviewsRead, ReviewsWrite,
	CollectionsRead, CollectionsWrite,
	FlowsRead, FlowsWrite,
	ReportsRead, ReportsWrite, ReportsShare,
	CommentsWrite, AudiencesRead, SchedulesWrite,
}

// Valid reports whether s names a scope.
func Valid(s string) bool { return slices.Contains(All, s) }
