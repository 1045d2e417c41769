package collections

import (
	"encoding/json"

	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// Wire is a request for information on the wire: the REST read, and
// the data of its webhooks and callbacks.
type Wire struct {
	wire.RequestHead
	Description         string               `json:"description"`
	Questions           []questions.Question `json:"questions"`
	Respondents         []string             `json:"respondents"`
	ResolvedRespondents []wire.Person        `json:"resolvedRespondents"`
	RequiredResponses   int                  `json:"requiredResponses"`
	ResponsesSoFar      int                  `json:"responsesSoFar"`
	Replies             []WireReply          `json:"replies"`
	DueAt               *wiretime.Time       `json:"dueAt"`
	wire.RequestTail
}

// WireReply is one submitted reply with its typed answers.
type WireReply struct {
	Respondent  wire.Person                `json:"respondent"`
	SubmittedAt wiretime.Time              `json:"submittedAt"`
	Answers     map[string]json.RawMessage `json:"answers"`
	// OnBehalfOf is the person away whom the respondent stood in for;
	// absent when they replied in their own name.
	OnBehalfOf *wire.Delegator `json:"onBehalfOf,omitempty"`
}

// NewWire serializes c; baseURL makes the page url.
func NewWire(c *Collection, baseURL string) Wire {
	replies := make([]WireReply, len(c.Replies.V))
	for i, r := range c.Replies.V {
		replies[i] = WireReply{Respondent: wire.Person{ID: r.RespondentID, Name: r.RespondentName, Email: r.RespondentEmail},
			SubmittedAt: wiretime.New(r.SubmittedAt), Answers: r.Answers, OnBehalfOf: wire.OnBehalfOf(r.OnBehalfOfID, r.OnBehalfOfName)}
	}
	return Wire{
		RequestHead: wire.NewRequestHead(Kind, &c.RequestBase, baseURL), Description: c.Description,
		Questions: wire.NonNil(c.Questions.V), Respondents: wire.NonNil(c.Respondents), ResolvedRespondents: wire.All(c.Asked.V, func(p *models.PersonRef) wire.Person { return wire.Person(*p) }),
		RequiredResponses: c.RequiredResponses, ResponsesSoFar: c.ResponsesSoFar, Replies: replies,
		DueAt: wiretime.Ptr(c.DueAt), RequestTail: wire.NewRequestTail(&c.RequestBase, c.SettledAt),
	}
}

// NewCreated is c's create answer: its read, with the callback secret
// shown this once.
func NewCreated(c *Collection, baseURL string) Wire {
	out := NewWire(c, baseURL)
	out.CallbackSecret = c.CallbackSecret
	return out
}
