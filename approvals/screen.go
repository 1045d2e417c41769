package approvals

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/modelscreen"
	"github.com/assent-hq/assent/internal/rules"
)

// ErrScreenRefused is the failure type of a model screen whose endpoint
// refused the request (a 4xx): asking again would meet the same answer.
const ErrScreenRefused = "ModelScreenRefused"

// ScreenApproval asks the organisation's model screen about a new
// approval: its title, description, factors, input and metadata, every
// restricted field removed (modelscreen.Messages), against the
// organisation's ethics principles. A screen switched off since the
// workflow started, or an organisation without ethics rules, is skipped.
func (a *Activities) ScreenApproval(ctx context.Context, in ScreenInput) (ScreenResult, error) {
	screen, err := a.Store.ModelScreen(ctx, in.OrganizationID)
	if apperr.Is(err, apperr.NotFound) {
		return ScreenResult{Skipped: "it was switched off before it ran"}, nil
	}
	if err != nil {
		return ScreenResult{}, err
	}
	stored, err := a.Store.EnabledRules(ctx, in.OrganizationID)
	if err != nil {
		return ScreenResult{}, err
	}
	var principles []modelscreen.Principle
	for _, r := range stored {
		if r.Kind != rules.KindEthics {
			continue
		}
		i := slices.IndexFunc(principles, func(p modelscreen.Principle) bool { return strings.EqualFold(p.Name, r.Principle) })
		if i < 0 {
			principles = append(principles, modelscreen.Principle{Name: r.Principle})
			i = len(principles) - 1
		}
		principles[i].Concerns = append(principles[i].Concerns, r.Concern)
	}
	if len(principles) == 0 {
		return ScreenResult{Skipped: "the organisation has no enabled ethics rule, so no principle to screen against"}, nil
	}
	rec, err := Records(a.Store).Get(ctx, in.OrganizationID, in.ApprovalID)
	if err != nil {
		return ScreenResult{}, err
	}
	req := modelscreen.Request{Title: rec.Title, Description: rec.Description, Input: []byte(rec.Input),
		Metadata: []byte(rec.Metadata), Restricted: rec.RestrictedFields}
	for _, f := range rec.Factors.V {
		req.Factors = append(req.Factors, modelscreen.Factor{Label: f.Label, Status: f.Status, Detail: f.Detail})
	}
	concerns, err := modelscreen.Screen(ctx, a.ScreenHTTP,
		modelscreen.Endpoint{URL: screen.URL, Model: screen.Model, APIKey: screen.APIKey}, req, principles)
	var refused *modelscreen.Permanent
	if errors.As(err, &refused) {
		return ScreenResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrScreenRefused, nil)
	}
	if err != nil {
		return ScreenResult{}, err
	}
	out := ScreenResult{Concerns: make([]ScreenConcern, len(concerns))}
	for i, c := range concerns {
		out.Concerns[i] = ScreenConcern{Principle: c.Principle, Concern: c.Concern}
	}
	return out, nil
}
