package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// DecisionLink is the sign-in-free way for one approver to decide one low- or
// medium-risk approval from an email. Only the SHA-256 of its token is
// stored; the token is 256 random bits, so the row is the link's signature.
// It works once, until the approval expires.
type DecisionLink struct {
	TokenHash      string    `gorm:"primaryKey;size:64"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	ApprovalID     string    `gorm:"size:40;not null;index"`
	PersonID       string    `gorm:"size:40;not null"`
	ExpiresAt      time.Time `gorm:"not null;index"`
	UsedAt         *time.Time
	CreatedAt      time.Time `gorm:"not null"`
}

// CreateDecisionLink makes a link for personID to decide the
// organisation's approval approvalID until expires, returning the token,
// which goes into the email only. Which approvals may have one is the
// approvals service's rule (approvals.SignInFree).
func (s *RequestStore) CreateDecisionLink(ctx context.Context, orgID, approvalID string, expires time.Time, personID string) (string, error) {
	token := NewToken()
	l := &DecisionLink{TokenHash: HashSecret(token), OrganizationID: orgID, ApprovalID: approvalID,
		PersonID: personID, ExpiresAt: expires, CreatedAt: Now()}
	return token, oneStatement(s.db.WithContext(ctx)).Create(l).Error
}

// DiscardDecisionLink deletes the unused link for token, made for an email
// that was not sent.
func (s *RequestStore) DiscardDecisionLink(ctx context.Context, token string) error {
	return s.db.WithContext(ctx).Where("token_hash = ? AND used_at IS NULL", HashSecret(token)).Delete(&DecisionLink{}).Error
}

// deleteDecisionLinks deletes every decision link made for a person, used
// or not: a removed person's emailed links must not decide anything.
func deleteDecisionLinks(tx *gorm.DB, orgID, personID string) error {
	return tx.Where("organization_id = ? AND person_id = ?", orgID, personID).Delete(&DecisionLink{}).Error
}

// OpenedDecisionLink is a link with the person it acts for.
type OpenedDecisionLink struct {
	Link   *DecisionLink
	Person *Person
}

// OpenDecisionLink finds the link for token and the person it acts for,
// used or expired as well (the approvals service reads the approval and
// says what each means); a token that names no link of the approval is
// NotFound.
func (s *RequestStore) OpenDecisionLink(ctx context.Context, approvalID, token string) (*OpenedDecisionLink, error) {
	db := s.db.WithContext(ctx)
	var l DecisionLink
	err := db.Where("token_hash = ? AND approval_id = ?", HashSecret(token), approvalID).Take(&l).Error
	if err != nil {
		return nil, notFound(err, "decision link")
	}
	p, err := loadPerson(db, l.OrganizationID, l.PersonID)
	if err != nil {
		return nil, err
	}
	return &OpenedDecisionLink{Link: &l, Person: p}, nil
}

// UseDecisionLink records that the link decided its approval.
func (s *RequestStore) UseDecisionLink(ctx context.Context, l *DecisionLink) error {
	return s.db.WithContext(ctx).Model(&DecisionLink{}).Where("token_hash = ? AND used_at IS NULL", l.TokenHash).
		Update("used_at", Now()).Error
}

// Notice records an email sent about a request, so a retried send skips
// the people already told. ID names the email, such as
// "approval/<id>/<person>".
type Notice struct {
	ID             string    `gorm:"primaryKey;size:200"`
	OrganizationID string    `gorm:"size:40;not null;index"`
	SentAt         time.Time `gorm:"not null"`
}

// NoticeSent says whether the email id names was sent.
func (s *RequestStore) NoticeSent(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&Notice{}).Where("id = ?", id).Count(&n).Error
	return n > 0, err
}

// RecordNotice records that the email id names was sent; recording it
// again changes nothing.
func (s *RequestStore) RecordNotice(ctx context.Context, orgID, id string) error {
	return oneStatement(s.db.WithContext(ctx)).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&Notice{ID: id, OrganizationID: orgID, SentAt: Now()}).Error
}

// People returns the members and guests with these ids in orgID, in the
// order given, leaving out deactivated members and ids no longer found:
// they are not to be emailed. Each table is read once (byKind), with the
// organisation joined: every email about a request starts here.
func (s *DirectoryStore) People(ctx context.Context, orgID string, personIDs []string) ([]*Person, error) {
	db := s.db.WithContext(ctx)
	memberIDs, guestIDs := byKind(personIDs)
	found := make(map[string]*Person, len(personIDs))
	if len(memberIDs) > 0 {
		var rows []memberOfOrganization
		if err := db.Joins("Organization").Where("members.organization_id = ? AND members.id IN ? AND members.active", orgID, memberIDs).
			Find(&rows).Error; err != nil {
			return nil, err
		}
		for i := range rows {
			found[rows[i].ID] = &Person{Organization: rows[i].Organization, Member: &rows[i].Member}
		}
	}
	if len(guestIDs) > 0 {
		var rows []guestOfOrganization
		if err := db.Joins("Organization").Where("guests.organization_id = ? AND guests.id IN ?", orgID, guestIDs).
			Find(&rows).Error; err != nil {
			return nil, err
		}
		for i := range rows {
			found[rows[i].ID] = &Person{Organization: rows[i].Organization, Guest: &rows[i].Guest}
		}
	}
	var out []*Person
	for _, id := range personIDs {
		if p, ok := found[id]; ok && p.Organization != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// memberOfOrganization and guestOfOrganization are a member's and a
// guest's rows read with their organisation's (People).
type memberOfOrganization struct {
	Member
	Organization *Organization `gorm:"foreignKey:OrganizationID"`
}

type guestOfOrganization struct {
	Guest
	Organization *Organization `gorm:"foreignKey:OrganizationID"`
}

func (memberOfOrganization) TableName() string { return "members" }
func (guestOfOrganization) TableName() string  { return "guests" }
