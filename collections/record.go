package collections

import (
	"encoding/json"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
)

// StoredReply is one respondent's submitted reply as the record keeps it,
// its answers typed as their questions ask.
type StoredReply struct {
	RespondentID    string                     `json:"respondentId"`
	RespondentName  string                     `json:"respondentName"`
	RespondentEmail string                     `json:"respondentEmail"`
	SubmittedAt     time.Time                  `json:"submittedAt"`
	Answers         map[string]json.RawMessage `json:"answers"`
	// OnBehalfOfID and OnBehalfOfName are the person away whom the
	// respondent stood in for, if anyone.
	OnBehalfOfID   string `json:"onBehalfOfId,omitempty"`
	OnBehalfOfName string `json:"onBehalfOfName,omitempty"`
}

// Collection is a request for information. The API writes it at creation;
// after that only its workflow changes it, through PersistCollection.
// Drafts are not part of it (models.CollectionDraft).
type Collection struct {
	models.RequestBase
	Description string                            `gorm:"type:text;not null"`
	Questions   models.JSON[[]questions.Question] `gorm:"type:text;not null"`
	// Respondents are the entries as the agent sent them; RespondentIDs
	// the people they were resolved to at creation, and Asked those
	// people as they were then.
	Respondents       models.StringList               `gorm:"type:text;not null"`
	RespondentIDs     models.StringList               `gorm:"type:text;not null"`
	Asked             models.JSON[[]models.PersonRef] `gorm:"type:text;not null"`
	RequiredResponses int                             `gorm:"not null"`
	ResponsesSoFar    int                             `gorm:"not null"`
	Replies           models.JSON[[]StoredReply]      `gorm:"type:text;not null"`
	DueAt             *time.Time
	SettledAt         *time.Time
	RemindedAt        *time.Time
}

// The methods below are what the shared paths ask of a request for
// information's record (models.RequestRecord).

var kind = models.RegisterKind(&models.RequestKind{Noun: "request for information", Page: paths.Collection, Subject: Kind,
	IDPrefix: ids.Collection, Open: states.Open, Table: "collections"})

func (c *Collection) RequestHead() models.RequestHead {
	return c.RequestBase.HeadAsking(&c.RespondentIDs)
}
func (*Collection) RequestKind() *models.RequestKind                { return kind }
func (c *Collection) AskedPeople() *models.JSON[[]models.PersonRef] { return &c.Asked }
func (c *Collection) SettledWhen() (*time.Time, *string)            { return c.SettledAt, nil }
func (c *Collection) PrepareNew()                                   { models.PrepareAsked(&c.Replies.V, &c.Asked.V) }
func (c *Collection) ActedBy(personID string) bool {
	return models.ActedAmong(c.Asked.V, c.replied(), personID)
}

// RequestDue is when the agent wants the replies, else when the request
// expires.
func (c *Collection) RequestDue() time.Time {
	if c.DueAt != nil {
		return *c.DueAt
	}
	return c.ExpiresAt
}

// ApplyBeside deletes a submitted reply's draft with it.
func (c *Collection) ApplyBeside(tx *gorm.DB, before *Collection) error {
	for _, r := range c.Replies.V[min(len(before.Replies.V), len(c.Replies.V)):] {
		if err := tx.Where("collection_id = ? AND person_id = ?", c.ID, r.RespondentID).Delete(&models.CollectionDraft{}).Error; err != nil {
			return err
		}
	}
	return nil
}

// Records are the requests for information in s on the paths every kind
// shares.
func Records(s models.RequestsHost) models.Requests[Collection, *Collection] {
	return models.RecordsOf[Collection](s)
}

// Replied reports whether personID has submitted a reply.
func (c *Collection) Replied(personID string) bool { return slices.Contains(c.replied(), personID) }

// replied are who submitted a reply, in order.
func (c *Collection) replied() []string {
	return models.IDsOf(c.Replies.V, func(r *StoredReply) string { return r.RespondentID })
}
