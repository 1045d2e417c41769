package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
)

// MaxSendRecipients bounds the addresses of one send.
const MaxSendRecipients = 50

// SendRecipient is one address a report was sent to and who it is.
type SendRecipient struct {
	Email    string `json:"email"`
	PersonID string `json:"personId"`
	Kind     string `json:"kind"` // ApproverMember or ApproverGuest
	// Admitted marks an address the organisation had not seen: the send
	// made it a guest.
	Admitted bool `json:"admitted"`
}

// ReportSend is a report emailed to addresses with a covering note. Its
// workflow (workflows.ReportSend) sends the emails, each once; Started
// tells the reconciler a workflow took it up.
type ReportSend struct {
	ID             string                `gorm:"primaryKey;size:40"`
	OrganizationID string                `gorm:"size:40;not null;index"`
	ReportID       string                `gorm:"size:40;not null;index"`
	SentBy         string                `gorm:"size:60;not null"`
	SentByName     string                `gorm:"size:320;not null"`
	Note           string                `gorm:"type:text;not null"`
	Recipients     JSON[[]SendRecipient] `gorm:"type:text;not null"`
	Started        bool                  `gorm:"not null"`
	CreatedAt      time.Time
}

// SendReport makes send: in one transaction under the report's row lock
// it admits the addresses the organisation has not seen as guests, grants
// every recipient access (report.shared with those added), and records
// the send, bound to claim. A retry of a claimed send returns the send the
// first attempt made.
func (s *ReportStore) SendReport(ctx context.Context, orgID, reportID string, send *ReportSend, checkedAs string, by Actor, claim *Claim, data ShareEventData) (*Report, *ReportSend, []ReportGrant, error) {
	var r *Report
	var added []ReportGrant
	var earlier string
	wrote := false
	send.ID, send.OrganizationID, send.SentBy, send.SentByName = newID(ids.Send), orgID, by.ID, by.Name
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = getReport(tx.Clauses(lockForUpdate(tx)...), orgID, reportID); err != nil {
			return err
		}
		if err := stillClassified(r, checkedAs); err != nil {
			return err
		}
		if earlier, err = BindClaim(tx, claim, send.ID); err != nil || earlier != "" {
			if earlier != "" {
				return errRollback
			}
			return err
		}
		now := Now()
		send.ReportID, send.CreatedAt = r.ID, now
		var grants []NewGrant
		var admitted []string
		for i, rc := range send.Recipients.V {
			if rc.PersonID == "" {
				g := &Guest{ID: newID(ids.Guest), OrganizationID: orgID, Email: rc.Email}
				if err := tx.Create(g).Error; err != nil {
					if errors.Is(err, gorm.ErrDuplicatedKey) {
						return apperr.New(apperr.Conflict, "%s joined the organisation meanwhile; send again", rc.Email)
					}
					return err
				}
				send.Recipients.V[i].PersonID, send.Recipients.V[i].Kind, send.Recipients.V[i].Admitted = g.ID, ApproverGuest, true
				admitted = append(admitted, rc.Email)
			}
			rc = send.Recipients.V[i]
			grants = append(grants, NewGrant{Kind: rc.Kind, SubjectID: rc.PersonID, Name: rc.Email})
		}
		if added, err = insertGrants(tx, r, grants, by, now); err != nil {
			return err
		}
		if err := tx.Create(send).Error; err != nil {
			return err
		}
		detail := fmt.Sprintf("sent to %d address(es)", len(send.Recipients.V))
		if len(admitted) > 0 {
			detail += "; admitted as guests by " + by.Name + ": " + strings.Join(admitted, ", ")
		}
		if _, err := s.reportStep(tx, r, nil, "sent", detail, by, "", nil, now); err != nil {
			return err
		}
		if len(added) == 0 {
			return nil
		}
		wrote = true
		return sharedEvent(tx, r, added, data, now)
	})
	if earlier != "" {
		prior, err := s.GetSend(ctx, orgID, earlier)
		if err != nil {
			return nil, nil, nil, err
		}
		r, err := s.GetReport(ctx, orgID, prior.ReportID)
		return r, prior, nil, err
	}
	if err != nil {
		return nil, nil, nil, err
	}
	s.reportChanged(r.ID, wrote)
	return r, send, added, nil
}

// GetSend returns one of the organisation's sends.
func (s *ReportStore) GetSend(ctx context.Context, orgID, id string) (*ReportSend, error) {
	return take[ReportSend](s.db.WithContext(ctx), orgID, id, "send "+id)
}

// UnstartedSends lists sends made before olderThan that no workflow has
// taken up, oldest first.
func (s *ReportStore) UnstartedSends(ctx context.Context, olderThan time.Time, limit int) ([]ReportSend, error) {
	var out []ReportSend
	err := s.db.WithContext(ctx).Where("NOT started AND created_at < ?", olderThan).Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// MarkSendStarted records that a send's workflow took it up.
func (s *ReportStore) MarkSendStarted(ctx context.Context, orgID, id string) error {
	return s.db.WithContext(ctx).Model(&ReportSend{}).Where("organization_id = ? AND id = ?", orgID, id).Update("started", true).Error
}
