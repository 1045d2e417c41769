package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/actionschema"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// What people and agents do to an approval once it exists. Each action is
// an Update to the approval's workflow, which decides who may act; the
// Update returns once the transition is persisted, so the record read
// afterwards shows it. updateID, when set (an Idempotency-Key, a form's
// submission id), makes Temporal run a repeated request once.

// Decision is a person's decision on an approval. Its tags are the limits
// for the REST body and the page's form alike.
type Decision struct {
	Decision string `json:"decision" validate:"required,oneof=approve reject"`
	Note     string `json:"note" validate:"max=5000"`
	Reason   string `json:"reason" validate:"max=5000"`
	// Corrections are new values for editable fields, kept as sent.
	Corrections map[string]json.RawMessage `json:"corrections" validate:"max=100"`
}

// Question is an approver's question to the requester.
type Question struct {
	Question string `json:"question" validate:"required,max=5000"`
}

// Answer is the requester's answer to a question.
type Answer struct {
	QuestionID string `json:"questionId" validate:"required,max=40"`
	Answer     string `json:"answer" validate:"required,max=5000"`
}

// Decide records who decides what; the workflow refuses a person who may
// not, or a decision the request's state forbids.
func (s *Service) Decide(ctx context.Context, orgID, id, updateID string, who models.Actor, d Decision) (*Approval, error) {
	return s.DecideVia(ctx, orgID, id, updateID, who, d, "")
}

// DecideVia is Decide for a decision made elsewhere than Assent's pages
// and API (a chat app), which via names for the timeline.
func (s *Service) DecideVia(ctx context.Context, orgID, id, updateID string, who models.Actor, d Decision, via string) (*Approval, error) {
	if err := accounts.NeedPerson(who, "deciding"); err != nil {
		return nil, err
	}
	if err := s.guestsMayStillApprove(ctx, orgID, who); err != nil {
		return nil, err
	}
	if err := decisions.OneMeaningFields("corrections", d.Corrections); err != nil {
		return nil, err
	}
	if err := s.holdToSchema(ctx, orgID, id, who, d); err != nil {
		return nil, err
	}
	return s.Update(ctx, orgID, id, updateID, UpdateDecide, &DecideRequest{ActorID: who.ID,
		ActorName: who.Name, Decision: d.Decision, Note: d.Note, Reason: d.Reason, Corrections: d.Corrections, Via: via})
}

// holdToSchema refuses corrections that leave a gated approval's input
// outside its action's schema (kept on the record), naming the field. It
// runs before the decision is sent rather than in the workflow, whose
// checks run again on every replay, where a newer schema library could
// judge differently. Corrections the workflow refuses anyway (a
// rejection's, a settled approval's, a non-editable field's or a value of
// another kind) are left to it, so its refusal is the one given.
func (s *Service) holdToSchema(ctx context.Context, orgID, id string, who models.Actor, d Decision) error {
	if d.Decision != DecisionApprove || len(d.Corrections) == 0 {
		return nil
	}
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	input := json.RawMessage(a.Input)
	// Someone not asked learns nothing of the schema: the workflow
	// refuses them first.
	if len(a.InputSchema) == 0 || a.Status != states.Pending || !slices.Contains(a.ApproverIDs, who.ID) ||
		CheckCorrections(input, a.EditableFields, d.Corrections) != nil {
		return nil
	}
	schema, err := actionschema.Compile(a.InputSchema)
	if err != nil { // checked when the action was saved
		return apperr.New(apperr.InvalidState, "this approval's action schema cannot be read: %v", err)
	}
	v := schema.Validate(CorrectedInput(input, d.Corrections))
	if v == nil {
		return nil
	}
	field := strings.SplitN(strings.SplitN(v.Path, ".", 2)[0], "[", 2)[0]
	if _, corrected := d.Corrections[field]; !corrected {
		return apperr.Field(apperr.InvalidRequest, "corrections", "the corrected input does not meet the action's schema: %s", v.Error())
	}
	e := apperr.Field(apperr.InvalidRequest, "corrections."+field, "%s does not meet the action's schema: %s", field, v.Error())
	if v.Path == field {
		e.Says = v.Says
	}
	return e
}

// guestsMayStillApprove refuses a guest's decision once the organisation
// has stopped letting guests approve: the setting counts when a guest
// decides, not only when the request named them.
func (s *Service) guestsMayStillApprove(ctx context.Context, orgID string, who models.Actor) error {
	if !ids.HasPrefix(who.ID, ids.Guest) {
		return nil
	}
	org, err := s.store.GetOrganization(ctx, orgID)
	if err != nil {
		return err
	}
	if !org.GuestsMayApprove {
		return apperr.New(apperr.Forbidden, "this organisation no longer lets guests approve")
	}
	return nil
}

// Ask puts a question to the requester and returns the approval with the
// question asked.
func (s *Service) Ask(ctx context.Context, orgID, id, updateID string, who models.Actor, q Question) (*Approval, *models.Question, error) {
	if err := accounts.NeedPerson(who, "asking the requester"); err != nil {
		return nil, nil, err
	}
	req := &AskRequest{ActorID: who.ID, ActorName: who.Name, QuestionID: ids.New(ids.Question), Question: q.Question}
	a, err := s.Update(ctx, orgID, id, updateID, UpdateAsk, req)
	if err != nil {
		return nil, nil, err
	}
	for i := range a.Questions.V {
		if asked := &a.Questions.V[i]; asked.QuestionID == req.QuestionID {
			return a, asked, nil
		}
	}
	return nil, nil, fmt.Errorf("question %s missing after it was asked", req.QuestionID)
}

// Answer answers a question; only the requester may.
func (s *Service) Answer(ctx context.Context, orgID, id, updateID string, who models.Actor, in Answer) (*Approval, error) {
	return s.Update(ctx, orgID, id, updateID, UpdateAnswer,
		&AnswerRequest{Requester: who.ID, QuestionID: in.QuestionID, Answer: in.Answer})
}

// RemoveAsked takes a person removed from the organisation off each of
// the pending approvals named, through its workflow, which falls back to
// the organisation's owners and administrators when nobody left could
// settle one: read for each approval, those away replaced by who stands
// in for them there, as for a request that names nobody. A request
// already settled, or no longer naming the person, needs nothing.
func (s *Service) RemoveAsked(ctx context.Context, orgID string, by models.Actor, personID, personName string, approvalIDs []string) error {
	return s.RemovePerson(ctx, orgID, approvalIDs, personID, UpdateRemoveApprover, "remove-approver",
		func(a *Approval) (workflows.Argument, error) {
			defaults, err := s.defaultApprovers(ctx, orgID, requests.Handover{Requester: a.Requester})
			if err != nil {
				return nil, err
			}
			return &workflows.RemoveAskedRequest{PersonID: personID, PersonName: personName, Defaults: requests.IDsOf(defaults),
				OnBehalfOf: requests.OnBehalfOf(requests.AskedVia(defaults)), ActorID: by.ID, ActorName: by.Name}, nil
		}, apperr.InvalidState, apperr.NotAnApprover)
}
