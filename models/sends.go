package models

import (
	"context"
	"time"

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

// InsertSend writes send, in ctx's transaction.
func (s *ReportStore) InsertSend(ctx context.Context, send *ReportSend) error {
	if send.ID == "" {
		send.ID = newID(ids.Send)
	}
	return insertIn(ctx, send)
}

// AdmitGuest writes g, a guest a send admits, in ctx's transaction; an
// address that became a member or guest meanwhile is ErrDuplicate, which
// ends the transaction.
func (s *ReportStore) AdmitGuest(ctx context.Context, g *Guest) error {
	if g.ID == "" {
		g.ID = newID(ids.Guest)
	}
	return insertIn(ctx, g)
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
