package approvals

import "github.com/assent-hq/assent/models"

// The adapters name an approval's parts by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type Change = models.Change
