package idempotency

import "github.com/assent-hq/assent/models"

// Claim is an Idempotency-Key held for one request, bound to the
// organisation, the caller and the request's digest.
type Claim = models.Claim
