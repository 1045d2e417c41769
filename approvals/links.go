package approvals

import (
	"context"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/models"
)

// ErrSignInNeeded is returned for a decision link to a request whose risk
// needs the person to sign in. Links are only made for low and medium
// risk; this is the backstop.
var ErrSignInNeeded = apperr.New(apperr.Forbidden, "this request needs you to sign in to decide it")

// Errors of decision links, in words the person can act on.
var (
	ErrDecisionLinkInvalid = apperr.New(apperr.NotFound, "this link is not valid; open the request from your inbox instead")
	ErrDecisionLinkUsed    = apperr.New(apperr.InvalidState, "this link has already been used to decide; sign in to see the request")
	ErrDecisionLinkExpired = apperr.New(apperr.InvalidState, "this link has expired with its request")
)

// SignInFree says whether an approval of this risk may be decided from an
// emailed link without signing in: low and medium only. An approval of
// another risk gets no link, and a link to one opens only after signing in.
func SignInFree(risk string) bool { return risk == models.RiskLow || risk == models.RiskMedium }

// OpenedLink is a decision link with what it opens: the approval it
// decides and the person it acts for.
type OpenedLink struct {
	*models.OpenedDecisionLink
	Approval *Approval
}

// OpenLink opens the sign-in-free decision link token of approval id. A
// link that has ended (used, or expired with its request) still opens,
// read-only, with ended saying why, so the page can show how the request
// ended.
func (s *Service) OpenLink(ctx context.Context, id, token string) (opened *OpenedLink, ended string, err error) {
	if token == "" {
		return nil, "", ErrDecisionLinkInvalid
	}
	link, err := s.store.OpenDecisionLink(ctx, id, token)
	var a *Approval
	if err == nil {
		a, err = Records(s.store).Get(ctx, link.Link.OrganizationID, link.Link.ApprovalID)
	}
	switch {
	case apperr.Is(err, apperr.NotFound):
		return nil, "", ErrDecisionLinkInvalid
	case err != nil:
		return nil, "", err
	}
	opened = &OpenedLink{OpenedDecisionLink: link, Approval: a}
	if err := accounts.Active(opened.Person); err != nil {
		return nil, "", err
	}
	switch {
	case opened.Link.UsedAt != nil:
		ended = ErrDecisionLinkUsed.Message
	case !models.Now().Before(opened.Link.ExpiresAt):
		ended = ErrDecisionLinkExpired.Message
	}
	if !SignInFree(opened.Approval.Risk) {
		return opened, ended, ErrSignInNeeded
	}
	return opened, ended, nil
}

// DecideByLink decides as the person a link was sent to, then marks the
// link used: it decides once. The workflow takes at most one decision from
// a person, so two tabs racing decide once.
func (s *Service) DecideByLink(ctx context.Context, opened *OpenedLink, updateID string, d Decision) error {
	a := opened.Approval
	if _, err := s.Decide(ctx, a.OrganizationID, a.ID, updateID, opened.Person.Actor(), d); err != nil {
		return err
	}
	return s.store.UseDecisionLink(ctx, opened.Link)
}
