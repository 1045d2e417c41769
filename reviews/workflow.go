package reviews

import (
	"maps"
	"slices"
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/workflows"
)

// ActionReviewerRemoved is a person taken off a review's reviewers.
const ActionReviewerRemoved = "reviewer_removed"

// DefaultReviewersAdded ends the timeline entry of a removal that left too
// few reviewers to give the approvals needed, so the defaults joined.
const DefaultReviewersAdded = "too few reviewers were left to give the approvals needed, so the organisation's owners and administrators who can read the report were made its reviewers"

// Workflow is the workflow of one review: it waits for verdicts and
// cancellation (Updates) and for expiry (a timer). One changes_requested
// settles it; approvals from distinct reviewers settle it once they reach
// RequiredApprovals. Verdicts are audited; only the settling one sends an
// event.
func Workflow(ctx workflow.Context, in WorkflowInput) (State, error) {
	r := &review{in: in}
	r.Request = workflows.NewRequest(ctx, r, in.ReviewID, in.OrganizationID, in.Requester, ActivityPersist, State{Status: states.Open,
		Verdicts: []Verdict{}, ReviewerIDs: slices.Clone(in.ReviewerIDs), RequiredApprovals: max(in.RequiredApprovals, 1),
		OnBehalfOf: maps.Clone(in.OnBehalfOf)})
	if err := workflows.SetUpdates(ctx, r.Updates(
		workflows.Update{Name: UpdateVerdict, Handler: r.verdict, Validator: workflows.Validator(r.in.ReviewID, r.checkVerdict)},
	)); err != nil {
		return r.State, err
	}
	return r.run(ctx)
}

type review struct {
	workflows.Request[State]
	in WorkflowInput
}

func (r *review) run(ctx workflow.Context) (State, error) {
	if err := r.Begin(ctx, Transition{Action: workflows.ActionCreated, Event: events.ReviewRequested}); err != nil {
		return r.State, err
	}
	return r.Wait(ctx, r.in.ExpiresAt, nil, Transition{Action: workflows.ActionExpired, Event: events.ReviewExpired})
}

func (r *review) Settle(ctx workflow.Context, status string) {
	now := workflow.Now(ctx).UTC()
	r.State.Status, r.State.SettledAt = status, &now
}

func (r *review) CheckOpen() error { return r.State.checkOpen() }
func (r *review) Asking() (*[]string, *map[string]workflows.Delegator) {
	return &r.State.ReviewerIDs, &r.State.OnBehalfOf
}
func (r *review) Acted() []string  { return r.State.reviewers() }
func (r *review) NotAsked() string { return apperr.NotAReviewer }
func (r *review) Removal() workflows.Removal {
	return workflows.Removal{Update: UpdateRemoveReviewer, Action: ActionReviewerRemoved, Asked: "reviewers"}
}

// CheckRemove leaves on a review whoever returned a verdict: it stands.
func (r *review) CheckRemove(personID string) error {
	if r.State.reviewed(personID) {
		return workflows.Refuse(apperr.AlreadyDecided, "%s has already returned a verdict", personID)
	}
	return nil
}

// Removed makes the defaults reviewers when those left cannot give the
// approvals still needed, as an approval's owners and administrators join
// it; requiredApprovals is never lowered, and with no defaults the review
// waits for its expiry.
func (r *review) Removed(_ workflow.Context, req workflows.RemoveAskedRequest, t *Transition) (added bool) {
	if r.State.shortOfReviewers() {
		r.State.ReviewerIDs, r.State.OnBehalfOf, added = workflows.AddDefaults(r.State.ReviewerIDs, r.State.OnBehalfOf, req.Defaults, req.OnBehalfOf, req.PersonID)
	}
	if added {
		t.Detail += "; " + DefaultReviewersAdded
	}
	return added
}
func (r *review) EmailAsked(ctx workflow.Context) {
	r.Email(ctx, ActivityEmailReviewers, EmailReviewersInput{OrganizationID: r.in.OrganizationID, ReviewID: r.in.ReviewID})
}

func (r *review) verdict(ctx workflow.Context, req VerdictRequest) (State, error) {
	err := r.Apply(ctx, func() (Transition, error) {
		// Checked again under the lock: two verdicts from one person can
		// both pass validation before either runs.
		if err := r.checkVerdict(req); err != nil {
			return Transition{}, err
		}
		away := workflows.StandsInFor(r.State.OnBehalfOf, req.ReviewerID)
		r.State.Verdicts = append(r.State.Verdicts, Verdict{ReviewerID: req.ReviewerID, ReviewerName: req.ReviewerName,
			ReviewerEmail: req.ReviewerEmail, Verdict: req.Verdict, Note: req.Note, At: workflow.Now(ctx).UTC(), OnBehalfOf: away})
		t := Transition{Action: req.Verdict, ActorID: req.ReviewerID, ActorName: req.ReviewerName, Detail: workflows.JoinDetail(workflows.OnBehalf(away), req.Note)}
		switch {
		case req.Verdict == VerdictChangesRequested:
			r.Settle(ctx, states.ChangesRequested)
			t.Event = events.ReviewChangesRequested
		default:
			r.State.ApprovalsSoFar++
			t.Detail = workflows.JoinDetail(r.State.approvalsDetail(), workflows.OnBehalf(away), req.Note)
			if r.State.ApprovalsSoFar >= r.State.RequiredApprovals {
				r.Settle(ctx, states.Approved)
				t.Event = events.ReviewApproved
			}
		}
		return t, nil
	})
	return r.State, err
}

// reviewers are who returned a verdict, in order.
func (s *State) reviewers() []string {
	out := make([]string, len(s.Verdicts))
	for i, v := range s.Verdicts {
		out[i] = v.ReviewerID
	}
	return out
}

// shortOfReviewers reports whether the reviewers yet to return a verdict
// are fewer than the approvals still needed.
func (s *State) shortOfReviewers() bool {
	able := 0
	for _, id := range s.ReviewerIDs {
		if !s.reviewed(id) {
			able++
		}
	}
	return able < s.RequiredApprovals-s.ApprovalsSoFar
}

// reviewed reports whether personID has returned a verdict.
func (s *State) reviewed(personID string) bool {
	return slices.ContainsFunc(s.Verdicts, func(v Verdict) bool { return v.ReviewerID == personID })
}

// approvalsDetail says how far the approvals have come, for the timeline.
func (s *State) approvalsDetail() string {
	return strconv.Itoa(s.ApprovalsSoFar) + " of " + strconv.Itoa(s.RequiredApprovals) + " approvals"
}
