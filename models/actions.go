package models

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/ids"
)

// Action is an action an organisation gates: the input it takes (a JSON
// Schema), what a person may correct, and the policy that decides each
// check. Package gate builds and checks it.
type Action struct {
	ID             string     `gorm:"primaryKey;size:40"`
	OrganizationID string     `gorm:"size:40;not null;uniqueIndex:idx_actions_org_name,priority:1"`
	Name           string     `gorm:"size:200;not null;uniqueIndex:idx_actions_org_name,priority:2"`
	Description    string     `gorm:"type:text;not null"`
	InputSchema    RawJSON    `gorm:"type:text;not null"`
	EditableFields StringList `gorm:"type:text;not null"`
	// Policy is the ordered rules; the first whose condition holds decides.
	Policy JSON[[]PolicyRule] `gorm:"type:text;not null"`
	// DecisionTokenTTLSeconds, when set, is how long this action's decision
	// tokens stay valid, over the organisation's setting.
	DecisionTokenTTLSeconds *int
	// Executors are agent key ids that may report receipts of this
	// action's tokens, beside the key or person each token was issued to.
	Executors StringList `gorm:"type:text;not null;default:'[]'"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PolicyRule is one rule of an action's policy.
type PolicyRule struct {
	Name      string   `json:"name"`
	Condition string   `json:"condition"`
	Outcome   string   `json:"outcome"`
	Reason    string   `json:"reason,omitempty"`
	Risk      string   `json:"risk,omitempty"`
	Approvers []string `json:"approvers,omitempty"`
	ExpiresIn string   `json:"expiresIn,omitempty"`
}

// Gate check decisions.
const (
	GateAllowed          = "allowed"
	GateDenied           = "denied"
	GateApprovalRequired = "approval_required"
)

// GateCheck is one question put to the gate and its answer.
type GateCheck struct {
	ID             string  `gorm:"primaryKey;size:40"`
	OrganizationID string  `gorm:"size:40;not null;index"`
	ActionID       string  `gorm:"size:40;not null;index"`
	Action         string  `gorm:"size:200;not null"`
	Input          RawJSON `gorm:"type:text;not null"`
	Decision       string  `gorm:"size:20;not null"`
	// Rule is the policy rule that decided, empty when none matched.
	Rule   string `gorm:"size:200;not null"`
	Reason string `gorm:"type:text;not null"`
	// ApprovalID is the approval an approval_required check raised: unique,
	// so a retried check records it once.
	ApprovalID    *string `gorm:"size:40;uniqueIndex"`
	DecisionToken *string `gorm:"type:text"`
	FlowID        *string `gorm:"size:40;index"`
	ExternalID    *string `gorm:"size:255"`
	// MandateID is the standing mandate that allowed the check, if one did.
	MandateID  *string `gorm:"size:40;index"`
	CallerKind string  `gorm:"size:20;not null"`
	CallerID   string  `gorm:"size:60;not null"`
	CallerName string  `gorm:"size:320;not null"`
	CreatedAt  time.Time
	// Mandate is the mandate MandateID names, when the check that spent
	// it is being recorded (not a column).
	Mandate *Mandate `gorm:"-"`
}

// CreateAction saves a, built and checked by package gate.
func (s *GateStore) CreateAction(ctx context.Context, a *Action) error {
	a.ID = newID(ids.Action)
	a.CreatedAt = Now()
	a.UpdatedAt = a.CreatedAt
	err := s.db.WithContext(ctx).Create(a).Error
	return duplicate(err, "name", "an action named %q is already registered", a.Name)
}

// SaveAction writes a changed action; checks already made keep what the
// action said then.
func (s *GateStore) SaveAction(ctx context.Context, a *Action) error {
	a.UpdatedAt = Now()
	err := s.db.WithContext(ctx).Save(a).Error
	return duplicate(err, "name", "an action named %q is already registered", a.Name)
}

// GetAction returns one of the organisation's actions by id.
func (s *GateStore) GetAction(ctx context.Context, orgID, id string) (*Action, error) {
	return take[Action](s.db.WithContext(ctx), orgID, id, "action "+id)
}

// ActionNamed returns the organisation's action called name.
func (s *GateStore) ActionNamed(ctx context.Context, orgID, name string) (*Action, error) {
	var a Action
	err := s.db.WithContext(ctx).Where("organization_id = ? AND name = ?", orgID, name).Take(&a).Error
	if err != nil {
		return nil, notFound(err, "action "+name)
	}
	return &a, nil
}

// ListActions pages through the organisation's actions.
func (s *GateStore) ListActions(ctx context.Context, orgID string, p Page) ([]Action, string, error) {
	return list(s.db.WithContext(ctx).Where("organization_id = ?", orgID), p, ids.Action, func(a *Action) string { return a.ID })
}

// DeleteAction removes an action; its checks and the approvals they
// raised stay.
func (s *GateStore) DeleteAction(ctx context.Context, orgID, id string) error {
	return remove[Action](s.db.WithContext(ctx), orgID, id, "action "+id)
}

// InsertGateCheck writes c, in ctx's transaction, and counts it once that
// commits. An approval's check is written once: inserted is false when
// that approval has its check already.
func (s *GateStore) InsertGateCheck(ctx context.Context, c *GateCheck) (inserted bool, err error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	q := st.tx
	if c.ApprovalID != nil {
		q = q.Clauses(clause.OnConflict{DoNothing: true})
	}
	res := q.Create(c)
	if res.Error != nil || res.RowsAffected == 0 {
		return false, res.Error
	}
	st.onCommit = append(st.onCommit, func() { s.metrics.GateChecked(c.Decision) })
	return true, nil
}

// GateCheckOfApproval is the check that raised the organisation's
// approval.
func (s *GateStore) GateCheckOfApproval(ctx context.Context, orgID, approvalID string) (*GateCheck, error) {
	return s.gateCheckOf(ctx, orgID, "approval_id = ?", approvalID)
}

// GateAudit is a check's audit entry (on its flow's timeline too).
func GateAudit(c *GateCheck, detail string, by Actor) *AuditEntry {
	return &AuditEntry{OrganizationID: c.OrganizationID, FlowID: c.FlowID, SubjectType: "gate_check", SubjectID: c.ID, Seq: 1,
		Action: c.Decision, ActorID: by.ID, ActorName: by.Name, Detail: detail, At: c.CreatedAt}
}

// GetGateCheck returns one of the organisation's gate checks.
func (s *GateStore) GetGateCheck(ctx context.Context, orgID, id string) (*GateCheck, error) {
	return take[GateCheck](s.db.WithContext(ctx), orgID, id, "gate check "+id)
}

func (s *GateStore) gateCheckOf(ctx context.Context, orgID, where string, arg any) (*GateCheck, error) {
	var c GateCheck
	err := s.conn(ctx).Where("organization_id = ?", orgID).Where(where, arg).Take(&c).Error
	if err != nil {
		return nil, notFound(err, "gate check")
	}
	return &c, nil
}
