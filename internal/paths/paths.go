// Package paths holds the addresses of the pages other packages link to
// (emails, event data, redirects): each route pattern beside the function
// that builds its URL, so the two cannot drift apart.
package paths

import (
	"net/url"
	"strconv"
	"strings"
)

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

// ApprovalDecidePage is the route of the page that confirms one decision
// on an approval, chosen beforehand (a Teams card's Approve or Reject);
// ApprovalDecide builds its path.
const ApprovalDecidePage = "/approvals/:id/decide/:decision"

// ApprovalDecide is the path of the page confirming decision (approve or
// reject) on approval id.
func ApprovalDecide(id, decision string) string { return Approval(id) + "/decide/" + decision }

// CollectionPage is the route of a request for information's page, where
// respondents answer; Collection builds its path.
const CollectionPage = "/collections/:id"

// Collection is the path of collection id's page.
func Collection(id string) string { return "/collections/" + id }

// ReviewPage is the route of a review's page, where reviewers read the
// pinned version and return verdicts; Review builds its path.
const ReviewPage = "/reviews/:id"

// Review is the path of review id's page.
func Review(id string) string { return "/reviews/" + id }

// MandatesPage is the route of the page listing standing mandates (one's
// own, and an administrator's organisation's), where they are revoked.
const MandatesPage = "/mandates"

// Mandate is the path of mandate id on the Mandates page.
func Mandate(id string) string { return MandatesPage + "#" + id }

// ReportPage is the route of a report's page in the app; Report builds its
// path. A slug's slashes stay slashes, so the address reads as the slug.
const ReportPage = "/reports/*slug"

// Report is the path of the page of the report with slug.
func Report(slug string) string { return "/reports/" + slug }

// Local reports whether next is a path on the same site, safe to redirect
// to after a sign-in: no scheme, no host, no "//" or "\" (browsers read
// both as another host), no control characters.
func Local(next string) bool {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, `\`) {
		return false
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	u, err := url.Parse(next)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

// ReaderPage is the route where the app lets a signed-in person into a
// report's own origin; Reader builds its path.
const ReaderPage = "/read/:key"

// Reader is the path that opens the report with key for its reader, at
// next on the report's origin.
func Reader(key, next string) string {
	return "/read/" + key + "?next=" + url.QueryEscape(next)
}

// ReportEnter is where a report's origin trades a reader ticket for its
// own cookie.
const ReportEnter = "/_assent/enter"

// ReportData is the path prefix under which a report reads its datasets.
const ReportData = "/_data/"

// ReportVersions is the path prefix under which a report's origin serves
// its published versions, each pinned: ReportVersion builds one's root.
const ReportVersions = "/_assent/v/"

// ReportVersion is the root of version n on its report's origin.
func ReportVersion(n int) string { return ReportVersions + strconv.Itoa(n) + "/" }

// ReportSelectScript is our script on a report's origin that tells the
// app's review page what the reader selected.
const ReportSelectScript = "/_assent/select.js"
