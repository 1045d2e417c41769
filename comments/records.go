package comments

import "github.com/assent-hq/assent/models"

// The adapters name a comment thread by these names, the service's
// vocabulary; models stays the persistence layer behind them.
type Thread = models.CommentThread

// A thread's statuses.
const (
	ThreadOpen     = models.ThreadOpen
	ThreadResolved = models.ThreadResolved
)
