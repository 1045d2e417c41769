package collections

import "github.com/assent-hq/assent/models"

// The adapters name a request for information's records by these names, the
// service's vocabulary; models stays the persistence layer behind them.
type Collection = models.Collection
