package reviews

import "github.com/assent-hq/assent/models"

// The adapters name a review's records by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type (
	Review = models.Review
	Filter = models.ReviewFilter
)
