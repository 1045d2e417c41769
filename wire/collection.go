package wire

import (
	"encoding/json"
	"time"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Collection is a request for information on the wire: the REST read, and
// the data of its webhooks and callbacks.
type Collection struct {
	ID                  string               `json:"id"`
	Status              string               `json:"status"`
	URL                 string               `json:"url"`
	Title               string               `json:"title"`
	Description         string               `json:"description"`
	Questions           []questions.Question `json:"questions"`
	Respondents         []string             `json:"respondents"`
	ResolvedRespondents []Person             `json:"resolvedRespondents"`
	RequiredResponses   int                  `json:"requiredResponses"`
	ResponsesSoFar      int                  `json:"responsesSoFar"`
	Replies             []Reply              `json:"replies"`
	DueAt               *wiretime.Time       `json:"dueAt"`
	requestTail
}

// requestTail is what a request for information and a review end with on
// the wire, read from the record's RequestBase.
type requestTail struct {
	ExpiresAt   wiretime.Time  `json:"expiresAt"`
	ExternalID  *string        `json:"externalId"`
	FlowID      *string        `json:"flowId"`
	Metadata    models.RawJSON `json:"metadata"`
	CallbackURL *string        `json:"callbackUrl"`
	// CallbackSecret is set in the create response only.
	CallbackSecret *string        `json:"callbackSecret,omitempty"`
	RequestedBy    string         `json:"requestedBy"`
	RequestedByID  string         `json:"requestedById"`
	CreatedAt      wiretime.Time  `json:"createdAt"`
	UpdatedAt      wiretime.Time  `json:"updatedAt"`
	SettledAt      *wiretime.Time `json:"settledAt"`
}

func newRequestTail(b *models.RequestBase, settledAt *time.Time) requestTail {
	return requestTail{ExpiresAt: wiretime.New(b.ExpiresAt), ExternalID: b.ExternalID, FlowID: b.FlowID, Metadata: b.Metadata,
		CallbackURL: b.CallbackURL, RequestedBy: b.RequestedBy, RequestedByID: b.Requester,
		CreatedAt: wiretime.New(b.CreatedAt), UpdatedAt: wiretime.New(b.UpdatedAt), SettledAt: wiretime.Ptr(settledAt)}
}

// Person is someone a request asked: a member or a guest (kind). Name
// and email are empty for a guest removed since; a reply's respondent
// carries no kind.
type Person struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Kind  string `json:"kind,omitempty"`
	// Via is how the request named them: which field, and the person,
	// team or group named there.
	Via []models.Via `json:"via,omitempty"`
}

// Reply is one submitted reply with its typed answers.
type Reply struct {
	Respondent  Person                     `json:"respondent"`
	SubmittedAt wiretime.Time              `json:"submittedAt"`
	Answers     map[string]json.RawMessage `json:"answers"`
	// OnBehalfOf is the person away whom the respondent stood in for;
	// absent when they replied in their own name.
	OnBehalfOf *Delegator `json:"onBehalfOf,omitempty"`
}

// Delegator is the person away whom someone acting stood in for (a
// delegation).
type Delegator struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// onBehalfOf is the delegator a record keeps by id and name, or nil.
func onBehalfOf(id, name string) *Delegator {
	if id == "" {
		return nil
	}
	return &Delegator{ID: id, Name: name}
}

// CollectionURL is the page respondents answer on.
func CollectionURL(baseURL, id string) string { return baseURL + paths.Collection(id) }

// NewCollection serializes c; baseURL makes the page url.
func NewCollection(c *models.Collection, baseURL string) Collection {
	replies := make([]Reply, len(c.Replies.V))
	for i, r := range c.Replies.V {
		replies[i] = Reply{Respondent: Person{ID: r.RespondentID, Name: r.RespondentName, Email: r.RespondentEmail},
			SubmittedAt: wiretime.New(r.SubmittedAt), Answers: r.Answers, OnBehalfOf: onBehalfOf(r.OnBehalfOfID, r.OnBehalfOfName)}
	}
	return Collection{
		ID: c.ID, Status: c.Status, URL: CollectionURL(baseURL, c.ID), Title: c.Title, Description: c.Description,
		Questions: nonNil(c.Questions.V), Respondents: nonNil(c.Respondents), ResolvedRespondents: All(c.Asked.V, func(p *models.PersonRef) Person { return Person(*p) }),
		RequiredResponses: c.RequiredResponses, ResponsesSoFar: c.ResponsesSoFar, Replies: replies,
		DueAt: wiretime.Ptr(c.DueAt), requestTail: newRequestTail(&c.RequestBase, c.SettledAt),
	}
}
