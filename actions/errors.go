package actions

import (
	"context"
	"errors"
	"net/http"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// workflowError maps what an Update on an approval's workflow returned to
// the API's errors. This is the one place that knows Temporal's errors.
//   - A refusal from the workflow is a typed application error whose type
//     is the API error code and whose detail is the field at fault.
//   - A completed workflow (the approval settled) is an invalid_state.
func (s *Service) workflowError(ctx context.Context, a *models.Approval, err error) error {
	var refusal *temporal.ApplicationError
	if errors.As(err, &refusal) && apperr.Status(refusal.Type()) != http.StatusInternalServerError {
		e := apperr.New(refusal.Type(), "%s", refusal.Message())
		if refusal.HasDetails() {
			_ = refusal.Details(&e.Field)
		}
		return e
	}
	var missing *serviceerror.NotFound
	if errors.As(err, &missing) {
		// The workflow completes when the approval settles; read why.
		if fresh, ferr := s.Store.GetApproval(ctx, a.OrganizationID, a.ID); ferr == nil && fresh.Status != models.ApprovalPending {
			return apperr.New(apperr.InvalidState, "the approval is already %s", fresh.Status)
		}
		return apperr.New(apperr.Unavailable, "the approval's workflow is not running yet; try again shortly")
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return apperr.New(apperr.Unavailable, "the approval's workflow did not answer in time; try again")
	}
	return err
}
