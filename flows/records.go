package flows

import "github.com/assent-hq/assent/models"

// Flow is a flow's record, named as the service names it for the adapters;
// models stays the persistence layer behind it.
type Flow = models.Flow
