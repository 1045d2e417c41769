package models

import (
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
)

// Approval risks.
const (
	RiskLow      = "low"
	RiskMedium   = "medium"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

// Factor is one line of an approval's checklist.
type Factor struct {
	Label  string `json:"label"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

// Link is a labelled address shown with a request.
type Link struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// Question is an approver's question and the requester's answer.
type Question struct {
	QuestionID string     `json:"questionId"`
	Question   string     `json:"question"`
	AskedBy    string     `json:"askedBy"`
	AskedAt    time.Time  `json:"askedAt"`
	Answer     *string    `json:"answer"`
	AnsweredAt *time.Time `json:"answeredAt"`
}

// Change is one correction an approver applied; From and To are JSON
// values as sent, so numbers keep their exact text.
type Change struct {
	Field string          `json:"field"`
	From  json.RawMessage `json:"from"`
	To    json.RawMessage `json:"to"`
}

// FromText is the value before, as a person reads it.
func (c Change) FromText() string { return plainJSON(c.From) }

// ToText is the value after, as a person reads it.
func (c Change) ToText() string { return plainJSON(c.To) }

// plainJSON shows a JSON value as a person reads it: a string without its
// quotes, anything else as JSON.
func plainJSON(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Concern is what an ethics rule raised about a request.
type Concern struct {
	Principle string `json:"principle"`
	Rule      string `json:"rule"`
	Concern   string `json:"concern"`
}

// FromScreen says whether the organisation's model screen raised c, not
// an ethics rule.
func (c Concern) FromScreen() bool { return c.Rule == ScreenRule }

// Approval is an approval request. The API writes it at creation; after
// that only its workflow changes it, through the PersistApproval activity.
type Approval struct {
	RequestBase
	Description string         `gorm:"type:text;not null"`
	Risk        string         `gorm:"size:20;not null"`
	Factors     JSON[[]Factor] `gorm:"type:text;not null"`
	Links       JSON[[]Link]   `gorm:"type:text;not null"`
	ReportID    *string        `gorm:"size:40"`
	Approvers   StringList     `gorm:"type:text;not null"`
	ApproverIDs StringList     `gorm:"type:text;not null"`
	// ResolvedApprovers are the people ApproverIDs name, and Execution
	// the receipt of its decision token (nil until reported), filled in
	// when the record is read, listed or changed.
	ResolvedApprovers []PersonRef      `gorm:"-"`
	Execution         *Receipt         `gorm:"-"`
	Input             RawJSON          `gorm:"type:text"`
	EditableFields    StringList       `gorm:"type:text;not null"`
	RequiredApprovals int              `gorm:"not null"`
	ApprovalsSoFar    int              `gorm:"not null"`
	ApprovedBy        StringList       `gorm:"type:text;not null"`
	Questions         JSON[[]Question] `gorm:"type:text;not null"`
	DecidedBy         *string          `gorm:"size:320"`
	DecidedByID       *string          `gorm:"size:40"`
	DecidedAt         *time.Time
	Note              *string         `gorm:"type:text"`
	Reason            *string         `gorm:"type:text"`
	ApprovedInput     RawJSON         `gorm:"type:text"`
	Changes           JSON[[]Change]  `gorm:"type:text"`
	Concerns          JSON[[]Concern] `gorm:"type:text;not null"`
	RestrictedFields  StringList      `gorm:"type:text;not null"`
	// UnevaluatedRules are the organisation's rules whose condition could
	// not be evaluated on the request, each a sentence naming the stricter
	// outcome applied; its "created" timeline entry carries them.
	UnevaluatedRules StringList `gorm:"type:text"`
	// DecisionToken is the signed proof of what was approved, set when the
	// approval is approved (see ApprovalDecisionClaims).
	DecisionToken *string `gorm:"type:text"`
	// DecisionTokenTTLSeconds, when set, is how long its decision token
	// holds, in place of the organisation's setting; the gate sets it from
	// its action.
	DecisionTokenTTLSeconds *int `gorm:"column:decision_token_ttl_seconds"`
	// DecidedOnBehalfOfID and DecidedOnBehalfOf name the person away whom
	// the decider stood in for (a delegation), when they did.
	DecidedOnBehalfOfID *string `gorm:"size:40"`
	DecidedOnBehalfOf   *string `gorm:"size:320"`
	// EscalationAfter (seconds after creation) and EscalationTo (people as
	// named) are the escalation the request or a rule asked for;
	// EscalationIDs the people EscalationTo resolved to at creation, and
	// EscalatedAt when they were made approvers.
	EscalationAfter *int
	EscalationTo    StringList `gorm:"type:text"`
	EscalationIDs   StringList `gorm:"type:text"`
	EscalatedAt     *time.Time
	// Action and InputSchema are set on an approval the action gate
	// raised: the action's name, and the schema its corrections are held
	// to (as the action had it then).
	Action      *string `gorm:"size:200"`
	InputSchema RawJSON `gorm:"type:text"`
	// ApproverVia is how the request named each person it may ask, by
	// id, as resolved at creation (escalation's people included).
	ApproverVia JSON[map[string][]Via] `gorm:"type:text"`
}

// ApprovalFilter narrows a list of approvals.
type ApprovalFilter struct {
	RequestFilter
	// WaitingOn limits the list to requests waiting on this person
	// (pending, and theirs to decide), read from the asked index.
	WaitingOn string
	// Executed, when set, limits the list to approved requests reported
	// as run (true) or not (false).
	Executed *bool
}

// Narrow adds the approvals' own conditions.
func (f ApprovalFilter) Narrow(db, q *gorm.DB, orgID string, k *RequestKind) (*gorm.DB, error) {
	if err := KindOnly(f, approvalKind, k); err != nil {
		return nil, err
	}
	if f.WaitingOn != "" {
		q = q.Where("id IN (?)", approvalKind.askingOf(db, orgID, f.WaitingOn).Select("request_id"))
	}
	if f.Executed != nil {
		q = executed(db, q, orgID, *f.Executed)
	}
	return q, nil
}

func (a *Approval) RequestHead() RequestHead { return a.RequestBase.HeadAsking(&a.ApproverIDs) }

var approvalKind = RegisterKind(&RequestKind{Noun: "approval", Page: paths.Approval, Subject: events.RequestApproval, IDPrefix: ids.Approval, Open: states.Pending,
	Table: "approvals", AboutReports: true})

func (*Approval) RequestKind() *RequestKind { return approvalKind }
func (a *Approval) RequestDue() time.Time   { return a.ExpiresAt }
func (a *Approval) RiskLevel() string       { return a.Risk }
func (a *Approval) SettledWhen() (*time.Time, *string) {
	return a.DecidedAt, a.DecidedBy
}

// acted: who approved (or the approver they stand in for), and the
// requester, who may not decide, also not standing in for them.
func (a *Approval) ActedBy(personID string) bool {
	via := func(id string) []Via { return a.ApproverVia.V[id] }
	return voice(via(personID), personID) == a.Requester || actedFor(via, a.ApprovedBy, personID)
}

func (*Approval) LoadWith(db *gorm.DB, orgID string, recs []*Approval) error {
	return loadApprovals(db, orgID, recs)
}

// Approvals are the approvals on the paths every kind shares.
func (s *RequestStore) Approvals() Requests[Approval, *Approval] {
	return requestsOf[Approval](s.core)
}
