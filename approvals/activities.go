package approvals

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/outbound"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Worker is what the worker runs of approvals.
var Worker = requests.Worker{WorkflowType: WorkflowType, Workflow: Workflow,
	Activities: func(env requests.ActivityEnv, policy *netguard.Policy) any {
		return &Activities{ActivityEnv: env, ScreenHTTP: outbound.NewClientWithin(policy, ScreenAttemptTimeout)}
	}}

// Activities are an approval's activities, which the worker registers by
// their method names (ActivityPersist, …).
type Activities struct {
	requests.ActivityEnv
	// ScreenHTTP asks organisations' model screens: the guarded client,
	// waiting as long as an attempt of the screen may take.
	ScreenHTTP *http.Client
}

// PersistApproval writes one approval transition (requests.PersistTransition).
//
// The transition to approved signs the approval's decision token and
// keeps it on the record, so its read, its event and its callback carry the
// same token.
func (a *Activities) PersistApproval(ctx context.Context, t Transition) (workflows.Persisted, error) {
	var sign func(*Approval) error
	// Without its public base URL the instance cannot name itself as the
	// tokens' issuer: it issues none rather than hold the approval up.
	if t.State.Status == states.Approved && a.BaseURL != "" {
		var err error
		if sign, err = a.decisionToken(ctx, t.OrganizationID); err != nil {
			return workflows.Persisted{}, err
		}
	}
	return requests.PersistTransition(ctx, a.Store, Records(a.Store), t, func(rec *Approval, t *Transition) error {
		fill(rec, t)
		if sign != nil && rec.Status == states.Approved && rec.DecisionToken == nil {
			return sign(rec)
		}
		return nil
	}, func(rec *Approval) any { return NewWire(rec, a.BaseURL) },
		func(ctx context.Context, rec *Approval) error {
			return askApprovers(ctx, a.ActivityEnv, rec, false, nil)
		})
}

// decisionToken returns what sets an approved approval's decision token,
// with the active decision key and the organisation's setting read before
// the transition's transaction.
func (a *Activities) decisionToken(ctx context.Context, orgID string) (func(*Approval) error, error) {
	signer, err := a.Store.DecisionSigner(ctx)
	if err != nil {
		return nil, err
	}
	org, err := a.Store.GetOrganization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return func(rec *Approval) error {
		claims, err := decisions.ForApproval(rec.Approved(), org, a.BaseURL)
		if err != nil {
			// An input with no canonical form (from before inputs were
			// held to one) gets no token; the decision is still written.
			slog.Default().Warn("approved without a decision token", "approval", rec.ID, "error", err)
			return nil
		}
		token, err := signer.Sign(claims)
		if err != nil {
			return fmt.Errorf("decision token of %s: %w", rec.ID, err)
		}
		rec.DecisionToken = &token
		return nil
	}, nil
}

// EmailApprovers emails the approval's approvers the page url, and a
// sign-in-free link where the risk allows one: each approver not emailed
// yet, or the one reminder.
func (a *Activities) EmailApprovers(ctx context.Context, in EmailApproversInput) error {
	return emailApprovers(ctx, a.ActivityEnv, in.OrganizationID, in.ApprovalID, in.Reminder, in.PersonIDs)
}

// StandIns says who stands in now for each of the people named who is
// away, as a request made now would ask them (requests.Handover): an
// escalation asks them in their place when it fires.
func (a *Activities) StandIns(ctx context.Context, in StandInsInput) (StandInsResult, error) {
	var out StandInsResult
	away, err := a.Store.ActiveDelegations(ctx, in.OrganizationID, models.Now())
	if err != nil || len(away) == 0 {
		return out, err
	}
	h := requests.Handover{Requester: in.Requester}
	for _, id := range in.PersonIDs {
		r, ok, err := h.Delegate(ctx, away, id)
		if err != nil {
			return out, err
		}
		if ok {
			out.StandIns = append(out.StandIns, r)
		}
	}
	return out, nil
}

// EmailAnswer emails whoever asked a question its answer.
func (a *Activities) EmailAnswer(ctx context.Context, in EmailAnswerInput) error {
	return emailAnswer(ctx, a.ActivityEnv, in.OrganizationID, in.ApprovalID, in.QuestionID, in.AskerID)
}

// fill copies the workflow's state onto the record and completes
// the audit entry's actor and detail.
func fill(rec *Approval, t *Transition) {
	s := &t.State
	rec.Status = s.Status
	// A transition scheduled by older code carries no approvers; keep them.
	if s.ApproverIDs != nil {
		rec.ApproverIDs = s.ApproverIDs
		rec.Asked.V = models.AskedAs(rec.ApproverIDs, rec.Asked.V)
	}
	rec.ApprovalsSoFar = s.ApprovalsSoFar
	if s.EscalatedAt != nil {
		rec.EscalatedAt = s.EscalatedAt
	}
	rec.ApprovedBy = s.ApprovedBy
	rec.Questions.V = make([]models.Question, len(s.Questions))
	for i, q := range s.Questions {
		rec.Questions.V[i] = models.Question{QuestionID: q.QuestionID, Question: q.Question, AskedBy: q.AskedBy,
			AskedAt: q.AskedAt, Answer: q.Answer, AnsweredAt: q.AnsweredAt}
	}
	if s.DecidedAt != nil {
		rec.DecidedByID, rec.DecidedBy, rec.DecidedAt = &s.DecidedByID, &s.DecidedByName, s.DecidedAt
		rec.Note, rec.Reason = optional(s.Note), optional(s.Reason)
		if d := s.DecidedOnBehalfOf; d != nil {
			rec.DecidedOnBehalfOfID, rec.DecidedOnBehalfOf = &d.ID, &d.Name
		}
	}
	rec.ApproverVia.V = delegatesVia(rec.ApproverVia.V, s.OnBehalfOf)
	// Set only once approved: a state that came through Temporal carries a
	// nil ApprovedInput as the JSON text null.
	if s.ApprovedInput != nil && string(s.ApprovedInput) != "null" {
		rec.ApprovedInput = models.RawJSON(s.ApprovedInput)
		rec.Changes.V = make([]models.Change, len(s.Changes))
		for i, c := range s.Changes {
			rec.Changes.V[i] = models.Change{Field: c.Field, From: c.From, To: c.To}
		}
	}
	if s.ScreenConcerns != nil {
		screened(rec, s.ScreenConcerns)
	}
	requests.NameActor(t, rec.Requester, rec.RequestedBy)
	// The rules that applied because they could not be evaluated say so
	// on the timeline, where the request begins.
	if t.Action == workflows.ActionCreated && len(rec.UnevaluatedRules) > 0 {
		t.Detail = strings.TrimSpace(t.Detail + "\n" + strings.Join(rec.UnevaluatedRules, "\n"))
	}
	if t.Action == ActionApproved && len(s.Changes) > 0 {
		t.Detail = strings.TrimSpace(t.Detail + "\n" + describeChanges(rec.Changes.V))
	}
}

// delegatesVia adds to how the request reached each person the delegates
// the workflow asked since it was made, each reached through whom they
// stand in for, by the field that named that person; those asked at
// creation are there already.
func delegatesVia(via map[string][]models.Via, onBehalfOf map[string]workflows.Delegator) map[string][]models.Via {
	for _, id := range slices.Sorted(maps.Keys(onBehalfOf)) {
		if len(via[id]) > 0 {
			continue
		}
		d := onBehalfOf[id]
		field := fieldOf(via, d.ID)
		if via == nil {
			via = map[string][]models.Via{}
		}
		via[id] = []models.Via{{Field: field, Kind: models.ViaDelegation, ID: d.ID, Name: d.Name}}
	}
	return via
}

// fieldOf is the field that named the person away: how the request
// reached them (an escalation's person is reached through escalation.to),
// or a delegate standing in for them; approvers when neither says.
func fieldOf(via map[string][]models.Via, away string) string {
	if v := via[away]; len(v) > 0 {
		return v[0].Field
	}
	for _, id := range slices.Sorted(maps.Keys(via)) {
		for _, v := range via[id] {
			if v.Kind == models.ViaDelegation && v.ID == away {
				return v.Field
			}
		}
	}
	return "approvers"
}

// screened puts the model screen's concerns after the ethics rules' on
// rec, each naming models.ScreenRule; written again, they replace those
// written before.
func screened(rec *Approval, concerns []ScreenConcern) {
	kept := slices.DeleteFunc(slices.Clone(rec.Concerns.V), func(c models.Concern) bool { return c.Rule == models.ScreenRule })
	for _, c := range concerns {
		kept = append(kept, models.Concern{Principle: c.Principle, Rule: models.ScreenRule, Concern: c.Concern})
	}
	rec.Concerns.V = kept
}

func describeChanges(changes []models.Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = fmt.Sprintf("corrected %s: %s → %s", c.Field, c.FromText(), c.ToText())
	}
	return strings.Join(parts, "\n")
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
