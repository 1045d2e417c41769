package workflows

import (
	"maps"
	"slices"
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/states"
)

// ActionReviewerRemoved is a person taken off a review's reviewers.
const ActionReviewerRemoved = "reviewer_removed"

// DefaultReviewersAdded ends the timeline entry of a removal that left too
// few reviewers to give the approvals needed, so the defaults joined.
const DefaultReviewersAdded = "too few reviewers were left to give the approvals needed, so the organisation's owners and administrators who can read the report were made its reviewers"

// Review is the workflow of one review: it waits for verdicts and
// cancellation (Updates) and for expiry (a timer). One changes_requested
// settles it; approvals from distinct reviewers settle it once they reach
// RequiredApprovals. Verdicts are audited; only the settling one sends an
// event.
func Review(ctx workflow.Context, in ReviewInput) (ReviewState, error) {
	r := &review{in: in}
	r.request = newRequest(ctx, r, in.ReviewID, in.OrganizationID, in.Requester, ActivityPersistReview, ReviewState{Status: states.Open,
		Verdicts: []Verdict{}, ReviewerIDs: slices.Clone(in.ReviewerIDs), RequiredApprovals: max(in.RequiredApprovals, 1),
		OnBehalfOf: maps.Clone(in.OnBehalfOf)})
	r.emails = true
	if err := setUpdates(ctx, append(r.askingUpdates(),
		update{UpdateVerdict, r.verdict, validator(r.in.ReviewID, r.state.checkVerdict)},
		update{UpdateRemoveReviewer, r.removeReviewer, validator(r.in.ReviewID, r.state.checkRemoveReviewer)},
	)); err != nil {
		return r.state, err
	}
	return r.run(ctx)
}

type review struct {
	request[ReviewState]
	in ReviewInput
}

func (r *review) open() bool { return r.state.Status == states.Open }

func (r *review) run(ctx workflow.Context) (ReviewState, error) {
	if err := r.persist(ctx, ReviewTransition{Action: ActionCreated, Event: events.ReviewRequested}); err != nil {
		return r.state, err
	}
	r.startEmails(ctx)
	r.emailAsked(ctx)
	r.created = true
	if err := r.expire(ctx, r.in.ExpiresAt, r.open, func() ReviewTransition {
		r.settle(ctx, states.Expired)
		return ReviewTransition{Action: ActionExpired, Event: events.ReviewExpired}
	}); err != nil {
		return r.state, err
	}
	return r.state, r.finish(ctx)
}

func (r *review) settle(ctx workflow.Context, status string) {
	now := workflow.Now(ctx).UTC()
	r.state.Status, r.state.SettledAt = status, &now
}

func (r *review) checkOpen() error { return r.state.checkOpen() }
func (r *review) asking() (*[]string, *map[string]Delegator) {
	return &r.state.ReviewerIDs, &r.state.OnBehalfOf
}
func (r *review) acted() []string  { return r.state.reviewers() }
func (r *review) notAsked() string { return apperr.NotAReviewer }
func (r *review) emailAsked(ctx workflow.Context) {
	r.email(ctx, ActivityEmailReviewers, EmailReviewersInput{OrganizationID: r.in.OrganizationID, ReviewID: r.in.ReviewID})
}

func (r *review) verdict(ctx workflow.Context, req VerdictRequest) (ReviewState, error) {
	err := r.transition(ctx, func() (ReviewTransition, error) {
		// Checked again under the lock: two verdicts from one person can
		// both pass validation before either runs.
		if err := r.state.checkVerdict(req); err != nil {
			return ReviewTransition{}, err
		}
		away := standsInFor(r.state.OnBehalfOf, req.ReviewerID)
		r.state.Verdicts = append(r.state.Verdicts, Verdict{ReviewerID: req.ReviewerID, ReviewerName: req.ReviewerName,
			ReviewerEmail: req.ReviewerEmail, Verdict: req.Verdict, Note: req.Note, At: workflow.Now(ctx).UTC(), OnBehalfOf: away})
		t := ReviewTransition{Action: req.Verdict, ActorID: req.ReviewerID, ActorName: req.ReviewerName, Detail: joinDetail(onBehalf(away), req.Note)}
		switch {
		case req.Verdict == VerdictChangesRequested:
			r.settle(ctx, states.ChangesRequested)
			t.Event = events.ReviewChangesRequested
		default:
			r.state.ApprovalsSoFar++
			t.Detail = joinDetail(r.state.approvalsDetail(), onBehalf(away), req.Note)
			if r.state.ApprovalsSoFar >= r.state.RequiredApprovals {
				r.settle(ctx, states.Approved)
				t.Event = events.ReviewApproved
			}
		}
		return t, nil
	})
	return r.state, err
}

// removeReviewer takes a person removed from the organisation off an open
// review; a verdict they returned stays. As with an approval's approvers,
// when those left cannot give the approvals still needed, the defaults
// join and are emailed as the reviewers were at creation (the email skips
// whoever was already emailed); requiredApprovals is never lowered, and
// with no defaults the review waits for its expiry. The Update adds
// commands only to histories that receive it, so older histories replay
// unchanged without a version marker.
func (r *review) removeReviewer(ctx workflow.Context, req RemoveReviewerRequest) (ReviewState, error) {
	added := false
	err := r.transition(ctx, func() (ReviewTransition, error) {
		if err := r.state.checkRemoveReviewer(req); err != nil {
			return ReviewTransition{}, err
		}
		r.state.ReviewerIDs = slices.DeleteFunc(slices.Clone(r.state.ReviewerIDs), func(id string) bool { return id == req.PersonID })
		t := ReviewTransition{Action: ActionReviewerRemoved, ActorID: req.ActorID, ActorName: req.ActorName,
			Detail: "removed " + req.PersonName + " from the reviewers"}
		if r.state.shortOfReviewers() {
			r.state.ReviewerIDs, r.state.OnBehalfOf, added = addDefaults(r.state.ReviewerIDs, r.state.OnBehalfOf, req.Defaults, req.OnBehalfOf, req.PersonID)
		}
		if added {
			t.Detail += "; " + DefaultReviewersAdded
		}
		return t, nil
	})
	if err == nil && added {
		r.emailAsked(ctx)
	}
	return r.state, err
}

// reviewers are who returned a verdict, in order.
func (s *ReviewState) reviewers() []string {
	out := make([]string, len(s.Verdicts))
	for i, v := range s.Verdicts {
		out[i] = v.ReviewerID
	}
	return out
}

// shortOfReviewers reports whether the reviewers yet to return a verdict
// are fewer than the approvals still needed.
func (s *ReviewState) shortOfReviewers() bool {
	able := 0
	for _, id := range s.ReviewerIDs {
		if !s.reviewed(id) {
			able++
		}
	}
	return able < s.RequiredApprovals-s.ApprovalsSoFar
}

// reviewed reports whether personID has returned a verdict.
func (s *ReviewState) reviewed(personID string) bool {
	return slices.ContainsFunc(s.Verdicts, func(v Verdict) bool { return v.ReviewerID == personID })
}

// approvalsDetail says how far the approvals have come, for the timeline.
func (s *ReviewState) approvalsDetail() string {
	return strconv.Itoa(s.ApprovalsSoFar) + " of " + strconv.Itoa(s.RequiredApprovals) + " approvals"
}
