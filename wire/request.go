package wire

import (
	"time"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// RequestHead is what every kind's request starts with on the wire: its
// id, status, page and title; each kind's serializer embeds it first.
type RequestHead struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	URL    string `json:"url"`
	Title  string `json:"title"`
}

// NewRequestHead serializes the head of b, a request of kind, its page
// under baseURL.
func NewRequestHead(kind string, b *models.RequestBase, baseURL string) RequestHead {
	return RequestHead{ID: b.ID, Status: b.Status, URL: baseURL + models.RequestPage(kind, b.ID), Title: b.Title}
}

// RequestTail is what a request for information and a review end with on
// the wire, read from the record's RequestBase; each kind's serializer
// (in the kind's folder) embeds it.
type RequestTail struct {
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

// NewRequestTail serializes what b holds for every kind.
func NewRequestTail(b *models.RequestBase, settledAt *time.Time) RequestTail {
	return RequestTail{ExpiresAt: wiretime.New(b.ExpiresAt), ExternalID: b.ExternalID, FlowID: b.FlowID, Metadata: b.Metadata,
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

// Delegator is the person away whom someone acting stood in for (a
// delegation).
type Delegator struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// OnBehalfOf is the delegator a record keeps by id and name, or nil.
func OnBehalfOf(id, name string) *Delegator {
	if id == "" {
		return nil
	}
	return &Delegator{ID: id, Name: name}
}
