package push

import "github.com/assent-hq/assent/models"

// Subscription is what a browser's push subscription gives: its endpoint
// and keys. The adapters name it here; models stays the persistence layer.
type Subscription = models.NewPushSubscription
