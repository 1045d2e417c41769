package approvals

import "github.com/assent-hq/assent/models"

// The adapters name an approval's records by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	Approval   = models.Approval
	Filter     = models.ApprovalFilter
	Change     = models.Change
	OpenedLink = models.OpenedDecisionLink
)
