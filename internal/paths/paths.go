// Package paths holds the addresses of the pages other packages link to
// (emails, event data, redirects): each route pattern beside the function
// that builds its URL, so the two cannot drift apart.
package paths

// ApprovalPage is the route of an approval's page, where approvers decide;
// Approval builds its path.
const ApprovalPage = "/approvals/:id"

// Approval is the path of approval id's page.
func Approval(id string) string { return "/approvals/" + id }

// DecisionLinkPage is the route of the page a sign-in-free decision link
// opens; DecisionLink builds its path.
const DecisionLinkPage = "/approvals/:id/link/:token"

// DecisionLink is the path of the decision link token for approval id.
func DecisionLink(id, token string) string { return Approval(id) + "/link/" + token }

// CollectionPage is the route of a request for information's page, where
// respondents answer; Collection builds its path.
const CollectionPage = "/collections/:id"

// Collection is the path of collection id's page.
func Collection(id string) string { return "/collections/" + id }

// ReportPage is the route of a report's page in the app; Report builds its
// path. A slug's slashes stay slashes, so the address reads as the slug.
const ReportPage = "/reports/*slug"

// Report is the path of the page of the report with slug.
func Report(slug string) string { return "/reports/" + slug }
