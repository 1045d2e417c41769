package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/states"
)

// How an execution ended, as its executor reports it.
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)

// Receipt is an executor's report of running what a decision token
// decided: what ran, when, and how it ended. A token takes one receipt
// (TokenID, its jti, is unique); one whose input is not the input the
// token approved is kept too, as a mismatch.
type Receipt struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	TokenID        string `gorm:"size:60;not null;uniqueIndex"`
	// ApprovalID or GateCheckID is what the token decided (its sub).
	ApprovalID  *string `gorm:"size:40;index"`
	GateCheckID *string `gorm:"size:40;index"`
	FlowID      *string `gorm:"size:40;index"`
	Action      *string `gorm:"size:200"`
	Outcome     string  `gorm:"size:20;not null"`
	Result      RawJSON `gorm:"type:text"`
	// Input is what ran; InputSHA256 its RFC 8785 hash, ApprovedSHA256
	// the token's.
	Input          RawJSON `gorm:"type:text"`
	InputSHA256    string  `gorm:"size:64;not null"`
	ApprovedSHA256 string  `gorm:"size:64;not null"`
	Mismatch       bool    `gorm:"not null"`
	StartedAt      time.Time
	FinishedAt     time.Time
	// ReportedByID and ReportedBy are the key or member that posted it.
	ReportedByID string `gorm:"size:60;not null"`
	ReportedBy   string `gorm:"size:320;not null"`
	CreatedAt    time.Time
	// DisagreesWith is set on a later report of a token that already has
	// its receipt and that says otherwise (another input or outcome): the
	// receipt's id. Such a report is audited and announced, never stored
	// as a receipt (not a column).
	DisagreesWith *string `gorm:"-"`
}

// Subject names what the receipt's token decided, as audit details do.
func (r *Receipt) Subject() string {
	if r.ApprovalID != nil {
		return "approval " + *r.ApprovalID
	}
	if r.GateCheckID != nil {
		return "gate check " + *r.GateCheckID
	}
	return ""
}

// ReceiptAudit is an audit entry on rec's trail (its flow's timeline too).
func ReceiptAudit(rec *Receipt, seq int, action, detail string, by Actor, at time.Time) *AuditEntry {
	return &AuditEntry{OrganizationID: rec.OrganizationID, FlowID: rec.FlowID, SubjectType: "receipt", SubjectID: rec.ID,
		Seq: seq, Action: action, ActorID: by.ID, ActorName: by.Name, Detail: detail, At: at}
}

// InsertReceipt writes rec, in ctx's transaction. A token that already
// has its receipt is ErrDuplicate, which ends the transaction.
func (s *ReceiptStore) InsertReceipt(ctx context.Context, rec *Receipt) error {
	return insertIn(ctx, rec)
}

// LockReceipt reads the organisation's receipt id under its row lock, for
// the rest of ctx's transaction.
func (s *ReceiptStore) LockReceipt(ctx context.Context, orgID, id string) (*Receipt, error) {
	return lockedIn[Receipt](ctx, orgID, id, "receipt "+id)
}

// Receipt is the organisation's receipt id.
func (s *ReceiptStore) Receipt(ctx context.Context, orgID, id string) (*Receipt, error) {
	return s.receiptWhere(ctx, orgID, "id = ?", id)
}

// ReceiptOfToken is the receipt of the organisation's decision token
// tokenID (its jti).
func (s *ReceiptStore) ReceiptOfToken(ctx context.Context, orgID, tokenID string) (*Receipt, error) {
	return s.receiptWhere(ctx, orgID, "token_id = ?", tokenID)
}

func (s *ReceiptStore) receiptWhere(ctx context.Context, orgID, where string, arg any) (*Receipt, error) {
	var r Receipt
	err := s.conn(ctx).Where("organization_id = ?", orgID).Where(where, arg).Take(&r).Error
	if err != nil {
		return nil, notFound(err, "receipt")
	}
	return &r, nil
}

// receiptsOf reads the receipts of the organisation's approvals and gate
// checks named.
func receiptsOf(db *gorm.DB, orgID string, approvalIDs, checkIDs []string) ([]Receipt, error) {
	var out []Receipt
	if len(approvalIDs) == 0 && len(checkIDs) == 0 {
		return out, nil
	}
	// IN () is no valid SQL on every database: "" names nothing.
	err := db.Where("organization_id = ? AND (approval_id IN ? OR gate_check_id IN ?)", orgID, append(approvalIDs, ""), append(checkIDs, "")).
		Order("id").Find(&out).Error
	return out, err
}

// ExecutionsOf are the receipts of the organisation's approvals named,
// by approval: what each approved one reported when it ran.
func ExecutionsOf(db *gorm.DB, orgID string, approvalIDs []string) (map[string]*Receipt, error) {
	out := map[string]*Receipt{}
	if len(approvalIDs) == 0 {
		return out, nil
	}
	receipts, err := receiptsOf(db, orgID, approvalIDs, nil)
	if err != nil {
		return nil, err
	}
	for i := range receipts {
		out[*receipts[i].ApprovalID] = &receipts[i]
	}
	return out, nil
}

// Executed narrows q, a query of approvals, to those approved and reported
// as run (true) or approved and not reported (false).
func Executed(db, q *gorm.DB, orgID string, ran bool) *gorm.DB {
	reported := db.Model(&Receipt{}).Select("approval_id").Where("organization_id = ? AND approval_id IS NOT NULL", orgID)
	if ran {
		return q.Where("id IN (?)", reported)
	}
	return q.Where("status = ? AND id NOT IN (?)", states.Approved, reported)
}
