package models

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/questions"
	"github.com/assent-hq/assent/internal/states"
)

// Reply is one respondent's submitted reply, its answers typed as their
// questions ask.
type Reply struct {
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

// PersonRef names a person asked, as they were when asked.
type PersonRef struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	// Kind is ApproverMember or ApproverGuest.
	Kind string `json:"kind"`
	// Via is how the request named them, as resolved when it was made;
	// empty on records from before it was kept.
	Via []Via `json:"via,omitempty"`
}

// Via is one way a request named a person: the request field, and the
// member, guest, team, group or workspace (or everyone, or the default
// of owners and administrators) it named there.
type Via struct {
	Field string `json:"field"`
	Kind  string `json:"kind"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
}

// ViaDefault is how a request that named nobody reached its owners and
// administrators.
func ViaDefault(field string) Via {
	return Via{Field: field, Kind: "default", Name: "the owners and administrators"}
}

// ViaDelegation is the kind of Via that reached a delegate: the person
// away whom they stand in for (requests.StandIns).
const ViaDelegation = "delegation"

// StandsInFor is the person away whom someone reached as via stands in
// for: only when every way they were reached is a delegation, since one
// also named in their own right acts in their own name.
func StandsInFor(via []Via) (Via, bool) {
	for _, v := range via {
		if v.Kind != ViaDelegation {
			return Via{}, false
		}
	}
	if len(via) == 0 {
		return Via{}, false
	}
	return via[0], true
}

// Ref names p as asked now.
func (p *Person) Ref() PersonRef {
	kind := ApproverMember
	if p.Guest != nil {
		kind = ApproverGuest
	}
	return PersonRef{ID: p.ID(), Name: p.DisplayName(), Email: p.Email(), Kind: kind}
}

// Collection is a request for information. The API writes it at creation;
// after that only its workflow changes it, through PersistCollection.
// Drafts are not part of it (CollectionDraft).
type Collection struct {
	RequestBase
	Description string                     `gorm:"type:text;not null"`
	Questions   JSON[[]questions.Question] `gorm:"type:text;not null"`
	// Respondents are the entries as the agent sent them; RespondentIDs
	// the people they were resolved to at creation, and Asked those
	// people as they were then.
	Respondents       StringList        `gorm:"type:text;not null"`
	RespondentIDs     StringList        `gorm:"type:text;not null"`
	Asked             JSON[[]PersonRef] `gorm:"type:text;not null"`
	RequiredResponses int               `gorm:"not null"`
	ResponsesSoFar    int               `gorm:"not null"`
	Replies           JSON[[]Reply]     `gorm:"type:text;not null"`
	DueAt             *time.Time
	SettledAt         *time.Time
	RemindedAt        *time.Time
}

func (c *Collection) RequestHead() RequestHead { return c.RequestBase.HeadAsking(&c.RespondentIDs) }

var collectionKind = RegisterKind(&RequestKind{Noun: "request for information", Page: paths.Collection, Subject: events.RequestCollection, IDPrefix: ids.Collection, Open: states.Open,
	Table: "collections"})

func (*Collection) RequestKind() *RequestKind            { return collectionKind }
func (c *Collection) AskedPeople() *JSON[[]PersonRef]    { return &c.Asked }
func (c *Collection) SettledWhen() (*time.Time, *string) { return c.SettledAt, nil }
func (c *Collection) PrepareNew()                        { PrepareAsked(&c.Replies.V, &c.Asked.V) }
func (c *Collection) ActedBy(personID string) bool {
	return ActedAmong(c.Asked.V, c.replied(), personID)
}

// dueAt: when the agent wants the replies, else when the request expires.
func (c *Collection) RequestDue() time.Time {
	if c.DueAt != nil {
		return *c.DueAt
	}
	return c.ExpiresAt
}

// applied: a submitted reply's draft goes with it.
func (c *Collection) ApplyBeside(tx *gorm.DB, before *Collection) error {
	for _, r := range c.Replies.V[min(len(before.Replies.V), len(c.Replies.V)):] {
		if err := tx.Where("collection_id = ? AND person_id = ?", c.ID, r.RespondentID).Delete(&CollectionDraft{}).Error; err != nil {
			return err
		}
	}
	return nil
}

// Collections are the requests for information on the paths every kind
// shares.
func (s *RequestStore) Collections() Requests[Collection, *Collection] {
	return requestsOf[Collection](s.core)
}

// CollectionDraft is a respondent's unsubmitted answers, seen only by its
// author. Drafts never touch the workflow.
type CollectionDraft struct {
	CollectionID string  `gorm:"primaryKey;size:40"`
	PersonID     string  `gorm:"primaryKey;size:40"`
	Answers      RawJSON `gorm:"type:text;not null"`
	UpdatedAt    time.Time
}

// Replied reports whether personID has submitted a reply.
func (c *Collection) Replied(personID string) bool { return slices.Contains(c.replied(), personID) }

// replied are who submitted a reply, in order.
func (c *Collection) replied() []string {
	return IDsOf(c.Replies.V, func(r *Reply) string { return r.RespondentID })
}

// SaveDraft keeps personID's unsubmitted answers to an open collection.
func (s *RequestStore) SaveDraft(ctx context.Context, collectionID, personID string, answers json.RawMessage) error {
	d := CollectionDraft{CollectionID: collectionID, PersonID: personID, Answers: RawJSON(answers), UpdatedAt: Now()}
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "collection_id"}, {Name: "person_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"answers", "updated_at"}),
	}).Create(&d).Error
}

// Draft returns personID's draft of a collection, or nil.
func (s *RequestStore) Draft(ctx context.Context, collectionID, personID string) (*CollectionDraft, error) {
	var d CollectionDraft
	err := s.db.WithContext(ctx).Where("collection_id = ? AND person_id = ?", collectionID, personID).Take(&d).Error
	if err == gorm.ErrRecordNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("draft of %s: %w", collectionID, err)
	}
	return &d, nil
}
