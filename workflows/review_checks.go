package workflows

import (
	"slices"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
)

// checkOpen refuses any change to a settled review.
func (s *ReviewState) checkOpen() error {
	if s.Status != states.Open {
		return refuse(apperr.InvalidState, "the review is already %s", s.Status)
	}
	return nil
}

// checkVerdict says whether a reviewer's verdict may be taken now: the
// validator calls it to refuse early, the handler again under the lock.
func (s *ReviewState) checkVerdict(r VerdictRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.ReviewerIDs, r.ReviewerID) {
		return refuse(apperr.NotAReviewer, "you were not asked to review this")
	}
	if s.reviewed(r.ReviewerID) {
		return refuse(apperr.AlreadyDecided, "you have already returned your verdict")
	}
	if actedFor(s.OnBehalfOf, s.reviewers(), r.ReviewerID) {
		return refuse(apperr.AlreadyDecided, "a verdict was already returned by or on behalf of the person you act for")
	}
	if r.Verdict != VerdictApproved && r.Verdict != VerdictChangesRequested {
		return refuseField("verdict", "verdict must be approved or changes_requested")
	}
	return nil
}

// checkRemoveReviewer takes off an open review only someone asked who has
// not returned a verdict; the caller treats any refusal as nothing left to
// do.
func (s *ReviewState) checkRemoveReviewer(r RemoveReviewerRequest) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if !slices.Contains(s.ReviewerIDs, r.PersonID) {
		return refuse(apperr.NotAReviewer, "%s is not among this review's reviewers", r.PersonID)
	}
	if s.reviewed(r.PersonID) {
		return refuse(apperr.AlreadyDecided, "%s has already returned a verdict", r.PersonID)
	}
	return nil
}
