package approvals

import (
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/models"
)

// Approval is an approval request. The API writes it at creation; after
// that only its workflow changes it, through the PersistApproval activity.
type Approval struct {
	models.RequestBase
	Description string                       `gorm:"type:text;not null"`
	Risk        string                       `gorm:"size:20;not null"`
	Factors     models.JSON[[]models.Factor] `gorm:"type:text;not null"`
	Links       models.JSON[[]models.Link]   `gorm:"type:text;not null"`
	ReportID    *string                      `gorm:"size:40"`
	Approvers   models.StringList            `gorm:"type:text;not null"`
	ApproverIDs models.StringList            `gorm:"type:text;not null"`
	// Asked are the people ApproverIDs name, in order, named and addressed
	// as they were when asked (how each was reached is in ApproverVia).
	// Records written by a release before it was kept have none.
	Asked models.JSON[[]models.PersonRef] `gorm:"type:text"`
	// ResolvedApprovers are Asked with how each was reached, and Execution
	// the receipt of its decision token (nil until reported), filled in
	// when the record is read, listed or changed.
	ResolvedApprovers []models.PersonRef             `gorm:"-"`
	Execution         *models.Receipt                `gorm:"-"`
	Input             models.RawJSON                 `gorm:"type:text"`
	EditableFields    models.StringList              `gorm:"type:text;not null"`
	RequiredApprovals int                            `gorm:"not null"`
	ApprovalsSoFar    int                            `gorm:"not null"`
	ApprovedBy        models.StringList              `gorm:"type:text;not null"`
	Questions         models.JSON[[]models.Question] `gorm:"type:text;not null"`
	DecidedBy         *string                        `gorm:"size:320"`
	DecidedByID       *string                        `gorm:"size:40"`
	DecidedAt         *time.Time
	Note              *string                       `gorm:"type:text"`
	Reason            *string                       `gorm:"type:text"`
	ApprovedInput     models.RawJSON                `gorm:"type:text"`
	Changes           models.JSON[[]models.Change]  `gorm:"type:text"`
	Concerns          models.JSON[[]models.Concern] `gorm:"type:text;not null"`
	RestrictedFields  models.StringList             `gorm:"type:text;not null"`
	// UnevaluatedRules are the organisation's rules whose condition could
	// not be evaluated on the request, each a sentence naming the stricter
	// outcome applied; its "created" timeline entry carries them.
	UnevaluatedRules models.StringList `gorm:"type:text"`
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
	EscalationTo    models.StringList `gorm:"type:text"`
	EscalationIDs   models.StringList `gorm:"type:text"`
	EscalatedAt     *time.Time
	// Action and InputSchema are set on an approval the action gate
	// raised: the action's name, and the schema its corrections are held
	// to (as the action had it then).
	Action      *string        `gorm:"size:200"`
	InputSchema models.RawJSON `gorm:"type:text"`
	// ApproverVia is how the request named each person it may ask, by
	// id, as resolved at creation (escalation's people included).
	ApproverVia models.JSON[map[string][]models.Via] `gorm:"type:text"`
}

// Filter narrows a list of approvals.
type Filter struct {
	models.RequestFilter
	// WaitingOn limits the list to requests waiting on this person
	// (pending, and theirs to decide), read from the asked index.
	WaitingOn string
	// Executed, when set, limits the list to approved requests reported
	// as run (true) or not (false).
	Executed *bool
}

// Narrow adds the approvals' own conditions.
func (f Filter) Narrow(db, q *gorm.DB, orgID string, k *models.RequestKind) (*gorm.DB, error) {
	if err := models.KindOnly(f, kind, k); err != nil {
		return nil, err
	}
	if f.WaitingOn != "" {
		q = q.Where("id IN (?)", kind.AskingOf(db, orgID, f.WaitingOn).Select("request_id"))
	}
	if f.Executed != nil {
		q = models.Executed(db, q, orgID, *f.Executed)
	}
	return q, nil
}

// The methods below are what the shared paths ask of an approval's record
// (models.RequestRecord).

var kind = models.RegisterKind(&models.RequestKind{Noun: "approval", Page: paths.Approval, Subject: Kind, IDPrefix: ids.Approval,
	Open: states.Pending, Table: "approvals", AboutReports: true})

func (a *Approval) RequestHead() models.RequestHead { return a.RequestBase.HeadAsking(&a.ApproverIDs) }
func (*Approval) RequestKind() *models.RequestKind  { return kind }
func (a *Approval) RequestDue() time.Time           { return a.ExpiresAt }
func (a *Approval) RiskLevel() string               { return a.Risk }
func (a *Approval) SettledWhen() (*time.Time, *string) {
	return a.DecidedAt, a.DecidedBy
}

// ActedBy: who approved (or the approver they stand in for), and the
// requester, who may not decide, also not standing in for them.
func (a *Approval) ActedBy(personID string) bool {
	via := func(id string) []models.Via { return a.ApproverVia.V[id] }
	return models.Voice(via(personID), personID) == a.Requester || models.ActedFor(via, a.ApprovedBy, personID)
}

// AskedPeople are the people the approval asks, as asked: those a
// workflow adds later are named when it does (models.RequestRecord).
func (a *Approval) AskedPeople() *models.JSON[[]models.PersonRef] { return &a.Asked }

// LoadWith fills what an approval's read shows beside its row: the people
// it asks, in ApproverIDs order, and the receipt of an approved one that
// ran. Only people a record does not name (one written by an earlier
// release, or someone gone from the directory) are read from the
// directory.
func (*Approval) LoadWith(db *gorm.DB, orgID string, recs []*Approval) error {
	var unnamed, approved []string
	for _, a := range recs {
		a.Asked.V = models.AskedAs(a.ApproverIDs, a.Asked.V)
		unnamed = append(unnamed, models.Unnamed(a.Asked.V)...)
		if a.Status == states.Approved {
			approved = append(approved, a.ID)
		}
	}
	refs, err := models.RefsOf(db, orgID, unnamed)
	if err != nil {
		return err
	}
	ran, err := models.ExecutionsOf(db, orgID, approved)
	if err != nil {
		return err
	}
	for _, a := range recs {
		a.ResolvedApprovers = make([]models.PersonRef, len(a.Asked.V))
		for i, p := range a.Asked.V {
			if known, ok := refs[p.ID]; ok {
				p = known.Shown()
			}
			p.Via = a.ApproverVia.V[p.ID]
			a.ResolvedApprovers[i] = p
		}
		a.Execution = ran[a.ID]
	}
	return nil
}

// Records are the approvals in s on the paths every kind shares.
func Records(s models.RequestsHost) models.Requests[Approval, *Approval] {
	return models.RecordsOf[Approval](s)
}

// StandsInFor is the person away whom personID stands in for on a, when
// they were asked only as a delegate (see models.StandsInFor).
func (a *Approval) StandsInFor(personID string) (models.Via, bool) {
	return models.StandsInFor(a.ApproverVia.V[personID])
}

// Approved is what an approved approval's decision token claims of it
// (decisions.ForApproval): decided when its decision was written, or at
// its last write on records from before that was kept.
func (a *Approval) Approved() decisions.Approved {
	decided := a.UpdatedAt
	if a.DecidedAt != nil {
		decided = *a.DecidedAt
	}
	return decisions.Approved{ID: a.ID, OrganizationID: a.OrganizationID, Input: a.ApprovedInput, Deciders: a.ApprovedBy,
		DecidedAt: decided, TTLSeconds: a.DecisionTokenTTLSeconds, Action: a.Action}
}
