package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
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

// ReceiptRecord is a receipt to record with what it writes beside it.
type ReceiptRecord struct {
	Receipt *Receipt
	// Actor is who reported it, for the audit entry.
	Actor Actor
	// MismatchData builds execution.mismatch's data, sent for a mismatch.
	MismatchData func(*Receipt) ([]byte, error)
}

// RecordReceipt writes a receipt, its audit entry (on its flow's timeline)
// and, for a mismatch, execution.mismatch, in one transaction, and binds
// claim (when not nil) to it. When an earlier attempt of the claimed
// request recorded one, that receipt is returned. When the token already
// has a receipt, the error is receipt_exists, with the first receipt
// returned beside it; a report that disagrees with it is written as a
// disagreement (see disagree), else nothing is.
func (s *ReceiptStore) RecordReceipt(ctx context.Context, r ReceiptRecord, claim *Claim) (*Receipt, error) {
	rec := r.Receipt
	rec.ID, rec.CreatedAt = newID(ids.Receipt), Now()
	var earlier string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if earlier, err = BindClaim(tx, claim, rec.ID); err != nil || earlier != "" {
			return err
		}
		if err := tx.Create(rec).Error; err != nil {
			return err
		}
		action := "executed"
		if rec.Mismatch {
			action = "execution_mismatch"
		}
		detail := rec.Subject() + ": " + rec.Outcome
		if rec.Mismatch {
			detail += "; the input that ran (sha256 " + rec.InputSHA256 + ") is not the one approved (sha256 " + rec.ApprovedSHA256 + ")"
		}
		entry := &AuditEntry{ID: newID(ids.Audit), OrganizationID: rec.OrganizationID, FlowID: rec.FlowID, SubjectType: "receipt",
			SubjectID: rec.ID, Seq: 1, Action: action, ActorID: r.Actor.ID, ActorName: r.Actor.Name, Detail: detail, At: rec.CreatedAt}
		if err := writeAudit(tx, entry); err != nil || !rec.Mismatch {
			return err
		}
		data, err := r.MismatchData(rec)
		if err != nil {
			return err
		}
		return tx.Create(&Event{ID: newID(ids.Event), OrganizationID: rec.OrganizationID, Kind: events.ExecutionMismatch,
			SubjectType: "receipt", SubjectID: rec.ID, Data: data, CreatedAt: rec.CreatedAt}).Error
	})
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey):
		first, ferr := s.receiptWhere(ctx, rec.OrganizationID, "token_id = ?", rec.TokenID)
		if ferr != nil {
			return nil, ferr
		}
		if rec.InputSHA256 != first.InputSHA256 || rec.Outcome != first.Outcome {
			if err := s.disagree(ctx, r, first); err != nil {
				return nil, err
			}
		}
		return first, apperr.Field(apperr.ReceiptExists, "decisionToken", "this decision token already has its receipt, %s, reported at %s",
			first.ID, first.CreatedAt.Format(time.RFC3339))
	case err != nil:
		return nil, err
	case earlier != "":
		return s.receiptWhere(ctx, rec.OrganizationID, "id = ?", earlier)
	}
	if rec.ApprovalID != nil {
		s.changes.Changed(*rec.ApprovalID)
	}
	if rec.Mismatch {
		s.changes.EventWritten()
	}
	return rec, nil
}

// disagree keeps r, a later report of first's token that says another
// input ran or it ended otherwise: an audit entry execution_mismatch on
// first's trail and execution.mismatch with the report as data, in one
// transaction under first's row lock. The same report again (a retry)
// writes nothing more. The token's receipt stays first.
func (s *ReceiptStore) disagree(ctx context.Context, r ReceiptRecord, first *Receipt) error {
	rec := r.Receipt
	rec.DisagreesWith = &first.ID
	detail := first.Subject() + ": a later report by " + r.Actor.Name + " (" + r.Actor.ID + ") says " + rec.Outcome +
		" with the input of sha256 " + rec.InputSHA256 + "; the receipt says " + first.Outcome + " with sha256 " + first.InputSHA256
	wrote := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var locked Receipt
		if err := tx.Clauses(lockForUpdate(tx)...).Where("id = ?", first.ID).Take(&locked).Error; err != nil {
			return err
		}
		var seen int64
		if err := tx.Model(&AuditEntry{}).Where("organization_id = ? AND subject_id = ? AND action = ? AND detail = ?",
			first.OrganizationID, first.ID, "execution_mismatch", detail).Count(&seen).Error; err != nil || seen > 0 {
			return err
		}
		seq, err := nextSeq(tx, first.OrganizationID, first.ID)
		if err != nil {
			return err
		}
		entry := &AuditEntry{ID: newID(ids.Audit), OrganizationID: first.OrganizationID, FlowID: first.FlowID, SubjectType: "receipt",
			SubjectID: first.ID, Seq: seq, Action: "execution_mismatch", ActorID: r.Actor.ID, ActorName: r.Actor.Name, Detail: detail, At: rec.CreatedAt}
		if err := writeAudit(tx, entry); err != nil {
			return err
		}
		data, err := r.MismatchData(rec)
		if err != nil {
			return err
		}
		wrote = true
		return tx.Create(&Event{ID: newID(ids.Event), OrganizationID: first.OrganizationID, Kind: events.ExecutionMismatch,
			SubjectType: "receipt", SubjectID: first.ID, Data: data, CreatedAt: rec.CreatedAt}).Error
	})
	if err == nil && wrote {
		s.changes.EventWritten()
	}
	return err
}

// Receipt is the organisation's receipt id.
func (s *ReceiptStore) Receipt(ctx context.Context, orgID, id string) (*Receipt, error) {
	return s.receiptWhere(ctx, orgID, "id = ?", id)
}

func (s *ReceiptStore) receiptWhere(ctx context.Context, orgID, where string, arg any) (*Receipt, error) {
	var r Receipt
	err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Where(where, arg).Take(&r).Error
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

// loadExecutions fills the Execution of rows that were approved and
// reported as run.
func loadExecutions(db *gorm.DB, orgID string, rows []*Approval) error {
	var approved []string
	for _, a := range rows {
		if a.Status == states.Approved {
			approved = append(approved, a.ID)
		}
	}
	if len(approved) == 0 {
		return nil
	}
	receipts, err := receiptsOf(db, orgID, approved, nil)
	if err != nil {
		return err
	}
	byApproval := make(map[string]*Receipt, len(receipts))
	for i := range receipts {
		byApproval[*receipts[i].ApprovalID] = &receipts[i]
	}
	for _, a := range rows {
		a.Execution = byApproval[a.ID]
	}
	return nil
}

// executed narrows q, a query of approvals, to those approved and reported
// as run (true) or approved and not reported (false).
func executed(db, q *gorm.DB, orgID string, ran bool) *gorm.DB {
	reported := db.Model(&Receipt{}).Select("approval_id").Where("organization_id = ? AND approval_id IS NOT NULL", orgID)
	if ran {
		return q.Where("id IN (?)", reported)
	}
	return q.Where("status = ? AND id NOT IN (?)", states.Approved, reported)
}
