// Package collections is the domain of requests for information: an agent
// asks people typed questions (internal/questions), each respondent
// replies, and the agent reads typed answers. Creating, reading and
// waiting follow approvals through the shared requests package; the
// workflow (Workflow) decides who may reply and when.
package collections

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/workflows"
)

// Deps are what the service needs.
type Deps = requests.Deps

// Service runs the collection kind's operations; build one per process.
// What every kind does alike comes from its requests.Lifecycle.
type Service struct {
	*requests.Lifecycle[Collection]
	store     Store
	netPolicy *netguard.Policy
}

// Store is what a request for information reads beside what every kind
// does: the people it asks, and each respondent's draft.
type Store interface {
	requests.Directory
	People(ctx context.Context, orgID string, personIDs []string) ([]*models.Person, error)
	Draft(ctx context.Context, collectionID, personID string) (*models.CollectionDraft, error)
	SaveDraft(ctx context.Context, collectionID, personID string, answers json.RawMessage) error
}

// New returns the service.
func New(d Deps) *Service {
	d = d.Filled()
	s := &Service{store: d.Store, netPolicy: d.NetPolicy}
	s.Lifecycle = requests.NewLifecycle[Collection](d, Names, Records(d.Store), s)
	return s
}

// Head is what the shared paths read of a request for information (requests.Kind).
func (s *Service) Head(c *Collection) requests.Head {
	return requests.HeadOf(&c.RequestBase, c.RespondentIDs, requests.AskedVia(c.Asked.V))
}

// CreateInput is the create body with its limits; Create checks what the
// tags cannot.
type CreateInput struct {
	requests.Fields
	Description       string            `json:"description" validate:"max=20000"`
	Questions         []questions.Input `json:"questions"` // checked by questions.Define
	Respondents       []string          `json:"respondents" validate:"required,min=1,max=50,dive,required,max=320"`
	DueAt             *string           `json:"dueAt" nullable:"true"`
	RequiredResponses *int              `json:"requiredResponses" nullable:"true"`
}

// respondentRole is how respondents are resolved and refused: guests an
// organisation admitted may always be asked for information.
var respondentRole = requests.Role{Field: "respondents", Unknown: apperr.UnknownRespondent, Ambiguous: apperr.AmbiguousRespondent, Guests: true}

// Create makes an open collection for the caller and starts its workflow,
// exactly once per claim (see requests.Insert).
func (s *Service) Create(ctx context.Context, p models.Actor, in *CreateInput, claim *models.Claim) (*Collection, error) {
	return s.Lifecycle.Create(ctx, claim, func() (*Collection, error) { return s.build(ctx, p, in) })
}

func (s *Service) build(ctx context.Context, p models.Actor, in *CreateInput) (*Collection, error) {
	now := models.Now()
	qs, err := questions.Define(in.Questions)
	if err != nil {
		return nil, err
	}
	base, err := in.Base(ctx, p, now, s.netPolicy)
	if err != nil {
		return nil, err
	}
	rec := &Collection{RequestBase: base, Description: in.Description, Respondents: in.Respondents}
	rec.Questions.V = qs
	if in.DueAt != nil {
		due, err := requests.Timestamp("dueAt", *in.DueAt)
		if err != nil {
			return nil, err
		}
		if !due.After(now) || due.After(rec.ExpiresAt) {
			return nil, apperr.Field(apperr.InvalidRequest, "dueAt", "dueAt must be in the future and no later than expiresAt")
		}
		rec.DueAt = &due
	}
	asked, err := requests.ResolveVia(ctx, s.store, p.Organization.ID, in.Respondents, respondentRole, requests.Handover{Requester: rec.Requester})
	if err != nil {
		return nil, err
	}
	rec.RespondentIDs, rec.Asked.V = requests.IDsOf(asked), requests.Shown(asked)
	rec.RequiredResponses = len(rec.RespondentIDs)
	if in.RequiredResponses != nil {
		if n := *in.RequiredResponses; n < 1 || n > len(rec.RespondentIDs) {
			return nil, apperr.Field(apperr.InvalidRequest, "requiredResponses",
				"requiredResponses must be between 1 and the %d people asked", len(rec.RespondentIDs))
		}
		rec.RequiredResponses = *in.RequiredResponses
	}
	return rec, nil
}

// Start starts the workflow of rec, a record already stored: Create and
// the reconciler start every collection this way.
func (s *Service) Start(ctx context.Context, rec *Collection) error {
	return s.StartWorkflow(ctx, &rec.RequestBase, WorkflowInput{RequestInput: requests.InputOf(&rec.RequestBase, requests.AskedVia(rec.Asked.V)),
		CollectionID: rec.ID, Questions: rec.Questions.V, RespondentIDs: rec.RespondentIDs, RequiredResponses: rec.RequiredResponses, DueAt: rec.DueAt})
}

// ReplyInput is a respondent's answers, keyed by question id; Submit
// false saves them as a draft only its author sees.
type ReplyInput struct {
	Answers map[string]json.RawMessage `json:"answers" validate:"max=40" nullable:"true"`
	Submit  bool                       `json:"submit"`
}

// Reply saves a person's draft or submits their reply. A draft is checked
// for its types and kept here; a submission goes to the workflow, which
// decides whether this person may reply now.
func (s *Service) Reply(ctx context.Context, who models.Actor, id, updateID string, in ReplyInput) (*Collection, error) {
	person, err := accounts.ActingPerson(who, "replying")
	if err != nil {
		return nil, err
	}
	c, err := s.View(ctx, who, id)
	if err != nil {
		return nil, err
	}
	if err := distinctAnswers(in.Answers); err != nil {
		return nil, err
	}
	if in.Submit {
		return s.Update(ctx, c.OrganizationID, id, updateID, UpdateSubmitReply,
			&SubmitReplyRequest{RespondentID: person.ID(), RespondentName: person.DisplayName(),
				RespondentEmail: person.Email(), Answers: in.Answers})
	}
	switch {
	case c.Status != states.Open:
		return nil, apperr.New(apperr.InvalidState, "the request for information is already %s", c.Status)
	case !slices.Contains(c.RespondentIDs, person.ID()):
		return nil, apperr.New(apperr.NotARespondent, "you were not asked to reply to this request for information")
	case c.Replied(person.ID()):
		return nil, apperr.New(apperr.AlreadySubmitted, "you have already submitted your reply")
	}
	answers, err := questions.Check(c.Questions.V, in.Answers, false)
	if err != nil {
		return nil, err
	}
	draft, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	return c, s.store.SaveDraft(ctx, c.ID, person.ID(), draft)
}

// Draft returns the saved answers of the person who acts to a
// collection, or none.
func (s *Service) Draft(ctx context.Context, who models.Actor, id string) (map[string]json.RawMessage, error) {
	d, err := s.store.Draft(ctx, id, who.ID)
	if err != nil || d == nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	return out, json.Unmarshal(d.Answers, &out)
}

// RemoveAsked takes a person removed from the organisation off each
// of the open collections named, through its workflow (see
// Workflow removeRespondent). A request already settled, or
// where the person replied or is no longer asked, needs nothing.
func (s *Service) RemoveAsked(ctx context.Context, orgID string, by models.Actor, personID, personName string, collectionIDs []string) error {
	req := &workflows.RemoveAskedRequest{PersonID: personID, PersonName: personName, ActorID: by.ID, ActorName: by.Name}
	return s.RemovePerson(ctx, orgID, collectionIDs, personID, UpdateRemoveRespondent, "remove-respondent",
		func(*Collection) (workflows.Argument, error) { return req, nil },
		apperr.InvalidState, apperr.NotARespondent, apperr.AlreadySubmitted)
}

// distinctAnswers refuses answers whose ids differ only by case, which an
// agent decoding them may read as one (questions.Define refuses such ids
// since; this holds a collection made before).
func distinctAnswers(answers map[string]json.RawMessage) error {
	if len(answers) == 0 {
		return nil
	}
	doc, err := json.Marshal(answers)
	if err != nil {
		return apperr.Field(apperr.InvalidRequest, "answers", "answers is not JSON")
	}
	return decisions.DistinctKeys("answers", doc)
}
