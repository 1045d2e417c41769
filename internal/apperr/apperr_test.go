package apperr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/api/serviceerror"
)

// A transient condition of the workflow service, however wrapped, is
// service_unavailable (503); any other error stays what it was.
func TestTransientTemporalConditionsAreUnavailable(t *testing.T) {
	for _, err := range []error{
		serviceerror.NewWorkflowNotReady("Unable to perform workflow execution update due to Workflow Task in failed state."),
		serviceerror.NewUnavailable("connection refused"),
		serviceerror.NewResourceExhausted(0, "namespace rate limit exceeded"),
		serviceerror.NewDeadlineExceeded("context deadline exceeded"),
		fmt.Errorf("update workflow: %w", serviceerror.NewWorkflowNotReady("Workflow Task in failed state")),
	} {
		e, ok := As(err)
		if assert.True(t, ok, "%v", err) {
			assert.Equal(t, Unavailable, e.Code, "%v", err)
			assert.Equal(t, http.StatusServiceUnavailable, e.Status())
			assert.NotContains(t, e.Message, "Workflow Task", "Temporal's wording stays in the log")
		}
	}
	for _, err := range []error{
		errors.New("boom"),
		serviceerror.NewInternal("server bug"),
		serviceerror.NewNotFound("workflow not found"),
		serviceerror.NewInvalidArgument("bad"),
	} {
		_, ok := As(err)
		assert.False(t, ok, "%v", err)
	}
	// An Error in the chain wins.
	e, ok := As(fmt.Errorf("%w: %w", New(Conflict, "taken"), serviceerror.NewUnavailable("x")))
	assert.True(t, ok)
	assert.Equal(t, Conflict, e.Code)
}
