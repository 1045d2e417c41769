package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/assent-hq/assent/workflows"
	"github.com/assent-hq/assent/workflows/workflowtest"
)

// runDelivery runs a delivery whose attempts answer with results in turn
// (the last one repeats) and returns the offset of each attempt from the
// start and the workflow's error.
func runDelivery(t *testing.T, unit time.Duration, results ...error) ([]time.Duration, error) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(workflowtest.Start)
	var attempts []time.Duration
	env.RegisterWorkflow(workflows.Delivery)
	env.RegisterActivityWithOptions(func(_ context.Context, id string) error {
		assert.Equal(t, "dlv_1", id)
		attempts = append(attempts, env.Now().Sub(workflowtest.Start))
		return results[min(len(attempts), len(results))-1]
	}, activity.RegisterOptions{Name: workflows.ActivityDeliver})
	env.ExecuteWorkflow(workflows.Delivery, workflows.DeliveryInput{DeliveryID: "dlv_1", RetryUnit: unit})
	require.True(t, env.IsWorkflowCompleted())
	return attempts, env.GetWorkflowError()
}

var (
	errRetryable = errors.New("the receiver answered 503")
	rejected     = temporal.NewNonRetryableApplicationError("the receiver answered 400", workflows.ErrDeliveryRejected, nil)
)

func TestDeliveryAttemptsFollowTheSchedule(t *testing.T) {
	attempts, err := runDelivery(t, 0, errRetryable)
	require.Error(t, err, "the delivery fails after its last attempt")
	m := time.Minute
	assert.Equal(t, []time.Duration{0, 1 * m, 5 * m, 21 * m, 85 * m}, attempts, "waits of 1, 4, 16 and 64 minutes")
}

func TestDeliveryScheduleScalesWithTheDevUnit(t *testing.T) {
	attempts, err := runDelivery(t, time.Second, errRetryable)
	require.Error(t, err)
	s := time.Second
	assert.Equal(t, []time.Duration{0, 1 * s, 5 * s, 21 * s, 85 * s}, attempts)
}

func TestDeliveryStopsAtTheFirstSuccess(t *testing.T) {
	attempts, err := runDelivery(t, 0, errRetryable, errRetryable, nil)
	require.NoError(t, err)
	assert.Len(t, attempts, 3)
}

func TestRejectedDeliveryIsNotRetried(t *testing.T) {
	attempts, err := runDelivery(t, 0, rejected)
	require.Error(t, err)
	assert.Len(t, attempts, 1)
	// The type alone stops retries, even if an activity forgets to mark
	// the error non-retryable.
	attempts, err = runDelivery(t, 0, temporal.NewApplicationError("400", workflows.ErrDeliveryRejected))
	require.Error(t, err)
	assert.Len(t, attempts, 1)
}
