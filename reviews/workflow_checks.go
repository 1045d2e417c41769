package reviews

import (
	"slices"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// checkOpen refuses any change to a settled review.
func (s *State) checkOpen() error {
	return workflows.RefuseSettled(s.Status, states.Open, "review")
}

// checkVerdict says whether a reviewer's verdict may be taken now: the
// validator calls it to refuse early, the handler again under the lock.
func (s *State) checkVerdict(r VerdictRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.ReviewerIDs, r.ReviewerID) {
		return workflows.Refuse(apperr.NotAReviewer, "you were not asked to review this")
	}
	if s.reviewed(r.ReviewerID) {
		return workflows.Refuse(apperr.AlreadyDecided, "you have already returned your verdict")
	}
	if workflows.ActedFor(s.OnBehalfOf, s.reviewers(), r.ReviewerID) {
		return workflows.Refuse(apperr.AlreadyDecided, "a verdict was already returned by or on behalf of the person you act for")
	}
	if r.Verdict != VerdictApproved && r.Verdict != VerdictChangesRequested {
		return workflows.RefuseField("verdict", "verdict must be approved or changes_requested")
	}
	return nil
}

// checkRemoveReviewer takes off an open review only someone asked who has
// not returned a verdict; the caller treats any refusal as nothing left to
// do.
func (s *State) checkRemoveReviewer(r RemoveReviewerRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.ReviewerIDs, r.PersonID) {
		return workflows.Refuse(apperr.NotAReviewer, "%s is not among this review's reviewers", r.PersonID)
	}
	if s.reviewed(r.PersonID) {
		return workflows.Refuse(apperr.AlreadyDecided, "%s has already returned a verdict", r.PersonID)
	}
	return nil
}
