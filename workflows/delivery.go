package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ErrDeliveryRejected is the error type of an attempt that must not be
// retried: the receiver answered a 4xx other than 408 and 429, or a
// redirect. Every other failure is retried.
const ErrDeliveryRejected = "delivery_rejected"

// DeliveryAttempts is how many attempts a delivery gets.
const DeliveryAttempts = 5

// DeliveryInput names the delivery; the activity loads the rest, so a
// retry 64 minutes later sends the current secret and a fresh signature.
type DeliveryInput struct {
	DeliveryID string
	// RetryUnit scales the schedule; zero is one minute. `assent dev` and
	// tests shorten it (ASSENT_DEV_RETRY_UNIT).
	RetryUnit time.Duration
	// FirstAttempt numbers this send's first attempt (attempts are counted
	// across sends); zero in workflows started before it existed.
	FirstAttempt int
}

// DeliveryRetryPolicy waits 1, 4, 16 and 64 units between five attempts.
func DeliveryRetryPolicy(unit time.Duration) *temporal.RetryPolicy {
	if unit <= 0 {
		unit = time.Minute
	}
	return &temporal.RetryPolicy{
		InitialInterval:        unit,
		BackoffCoefficient:     4,
		MaximumInterval:        64 * unit,
		MaximumAttempts:        DeliveryAttempts,
		NonRetryableErrorTypes: []string{ErrDeliveryRejected},
	}
}

// Delivery runs the attempts of one delivery. It fails, visibly in the
// Temporal UI, when the last attempt fails.
func Delivery(ctx workflow.Context, in DeliveryInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         DeliveryRetryPolicy(in.RetryUnit),
	})
	// Temporal counts the activity's attempts durably, also one cut off by
	// a crash after it sent, so FirstAttempt plus that count is the
	// attempt's true number.
	return workflow.ExecuteActivity(ctx, ActivityDeliver, in.DeliveryID, in.FirstAttempt).Get(ctx, nil)
}
