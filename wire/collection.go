package wire

import (
	"encoding/json"

	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/questions"
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
	ResolvedRespondents []models.PersonRef   `json:"resolvedRespondents"`
	RequiredResponses   int                  `json:"requiredResponses"`
	ResponsesSoFar      int                  `json:"responsesSoFar"`
	Replies             []Reply              `json:"replies"`
	DueAt               *Time                `json:"dueAt"`
	ExpiresAt           Time                 `json:"expiresAt"`
	ExternalID          *string              `json:"externalId"`
	FlowID              *string              `json:"flowId"`
	Metadata            models.RawJSON       `json:"metadata"`
	CallbackURL         *string              `json:"callbackUrl"`
	// CallbackSecret is set in the create response only.
	CallbackSecret *string `json:"callbackSecret,omitempty"`
	RequestedBy    string  `json:"requestedBy"`
	CreatedAt      Time    `json:"createdAt"`
	UpdatedAt      Time    `json:"updatedAt"`
	SettledAt      *Time   `json:"settledAt"`
}

// Person names a respondent in a reply.
type Person struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Reply is one submitted reply with its typed answers.
type Reply struct {
	Respondent  Person                     `json:"respondent"`
	SubmittedAt Time                       `json:"submittedAt"`
	Answers     map[string]json.RawMessage `json:"answers"`
}

// CollectionURL is the page respondents answer on.
func CollectionURL(baseURL, id string) string { return baseURL + paths.Collection(id) }

// NewCollection serializes c; baseURL makes the page url.
func NewCollection(c *models.Collection, baseURL string) Collection {
	replies := make([]Reply, len(c.Replies.V))
	for i, r := range c.Replies.V {
		replies[i] = Reply{Respondent: Person{ID: r.RespondentID, Name: r.RespondentName, Email: r.RespondentEmail},
			SubmittedAt: Time(r.SubmittedAt), Answers: r.Answers}
	}
	return Collection{
		ID: c.ID, Status: c.Status, URL: CollectionURL(baseURL, c.ID), Title: c.Title, Description: c.Description,
		Questions: nonNil(c.Questions.V), Respondents: nonNil(c.Respondents), ResolvedRespondents: nonNil(c.Asked.V),
		RequiredResponses: c.RequiredResponses, ResponsesSoFar: c.ResponsesSoFar, Replies: replies,
		DueAt: TimePtr(c.DueAt), ExpiresAt: Time(c.ExpiresAt), ExternalID: c.ExternalID, FlowID: c.FlowID,
		Metadata: c.Metadata, CallbackURL: c.CallbackURL, RequestedBy: c.RequestedBy,
		CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt), SettledAt: TimePtr(c.SettledAt),
	}
}
