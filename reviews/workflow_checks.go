package reviews

import (
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// checkOpen refuses any change to a settled review.
func (s *State) checkOpen() error {
	return workflows.RefuseSettled(s.Status, states.Open, "review")
}

// verdictRefusals are how a verdict is refused for who gives it.
var verdictRefusals = workflows.ActRefusals{NotAsked: "you were not asked to review this",
	Acted: "you have already returned your verdict", ActedCode: apperr.AlreadyDecided,
	ActedFor: "a verdict was already returned by or on behalf of the person you act for"}

// checkVerdict says whether a reviewer's verdict may be taken now: the
// validator calls it to refuse early, the handler again under the lock.
func (r *review) checkVerdict(req VerdictRequest) error {
	if err := r.CheckAct(req.ReviewerID, verdictRefusals); err != nil {
		return err
	}
	if req.Verdict != VerdictApproved && req.Verdict != VerdictChangesRequested {
		return workflows.RefuseField("verdict", "verdict must be approved or changes_requested")
	}
	return nil
}
