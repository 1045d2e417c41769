package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
)

// Reading a report on its own origin: the app issues a single-use ticket
// to a signed-in person it has checked, the report's host trades it for a
// reader session of its own. A reader session lives only as long as the
// app session it came from, so signing out of the app ends it too.
const (
	ReaderTicketLifetime = 60 * time.Second
)

// ErrReaderTicketInvalid is a ticket that is unknown, used, expired or
// for another report: the reader starts again from the app.
var ErrReaderTicketInvalid = errors.New("reader ticket invalid")

// ReaderTicket lets one app session open one report's host once.
type ReaderTicket struct {
	TicketHash string    `gorm:"primaryKey;size:64"`
	ReportID   string    `gorm:"size:40;not null"`
	SessionID  string    `gorm:"size:40;not null"`
	ExpiresAt  time.Time `gorm:"not null;index"`
	UsedAt     *time.Time
}

// ReaderSession is a signed-in reader on one report's host.
type ReaderSession struct {
	TokenHash string    `gorm:"primaryKey;size:64"`
	ReportID  string    `gorm:"size:40;not null"`
	SessionID string    `gorm:"size:40;not null;index"`
	CreatedAt time.Time `gorm:"not null"`
}

// ReportView is one opening of a report's page: who (nobody for a public
// reader not signed in), which version, when.
type ReportView struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	ReportID       string `gorm:"size:40;not null;index:idx_report_views_viewer,priority:1"`
	ViewerID       string `gorm:"size:40;not null;index:idx_report_views_viewer,priority:2"`
	Version        int    `gorm:"not null"`
	// Notified marks the views that fired report.viewed.
	Notified bool      `gorm:"not null"`
	At       time.Time `gorm:"not null;index:idx_report_views_viewer,priority:3"`
}

// AccessRequest is the last time a person asked for a report.
type AccessRequest struct {
	ReportID    string    `gorm:"primaryKey;size:40"`
	PersonID    string    `gorm:"primaryKey;size:40"`
	RequestedAt time.Time `gorm:"not null"`
}

// IssueReaderTicket makes a ticket for the app session sessionID to open
// report reportID, and returns it; only its hash is kept.
func (s *ReportStore) IssueReaderTicket(ctx context.Context, reportID, sessionID string) (string, error) {
	token := NewToken()
	t := &ReaderTicket{TicketHash: HashSecret(token), ReportID: reportID, SessionID: sessionID,
		ExpiresAt: Now().Add(ReaderTicketLifetime)}
	return token, s.db.WithContext(ctx).Create(t).Error
}

// RedeemReaderTicket uses a ticket for report reportID, once, and starts
// a reader session in its place, returning the session's token.
func (s *ReportStore) RedeemReaderTicket(ctx context.Context, ticket, reportID string) (string, error) {
	token := NewToken()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		var t ReaderTicket
		if err := tx.Where("ticket_hash = ?", HashSecret(ticket)).Take(&t).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrReaderTicketInvalid
			}
			return err
		}
		if t.ReportID != reportID || !now.Before(t.ExpiresAt) {
			return ErrReaderTicketInvalid
		}
		// The update is the claim: of two redemptions racing, one changes
		// the row.
		res := tx.Model(&ReaderTicket{}).Where("ticket_hash = ? AND used_at IS NULL", t.TicketHash).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrReaderTicketInvalid
		}
		return tx.Create(&ReaderSession{TokenHash: HashSecret(token), ReportID: reportID, SessionID: t.SessionID, CreatedAt: now}).Error
	})
	return token, err
}

// LoadReader is whom a reader session's token signs in on report
// reportID's host, or ErrSessionInvalid once the app session it came from
// has ended (signed out, expired, or the person removed).
func (s *ReportStore) LoadReader(ctx context.Context, token, reportID string) (*Person, error) {
	if token == "" {
		return nil, ErrSessionInvalid
	}
	db := s.db.WithContext(ctx)
	var rs ReaderSession
	if err := db.Where("token_hash = ? AND report_id = ?", HashSecret(token), reportID).Take(&rs).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, ErrSessionInvalid
		}
		return nil, err
	}
	var sess Session
	if err := db.Where("id = ?", rs.SessionID).Take(&sess).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, ErrSessionInvalid
		}
		return nil, err
	}
	return sessionPerson(db, &sess)
}

// ReportByKey finds a report by the key its host is named with.
func (s *ReportStore) ReportByKey(ctx context.Context, key string) (*Report, error) {
	var r Report
	err := s.db.WithContext(ctx).Where(&Report{Key: key}).Take(&r).Error
	if err != nil {
		return nil, notFound(err, "report")
	}
	return &r, nil
}

// PublicReportsBySlug lists, in any organisation, the unarchived reports
// at slug granted to the public, at most limit: a visitor not signed in
// names a report by its address alone.
func (s *ReportStore) PublicReportsBySlug(ctx context.Context, slug string, limit int) ([]Report, error) {
	db := s.db.WithContext(ctx)
	var out []Report
	err := db.Where("slug = ? AND NOT archived AND id IN (?)", slug,
		db.Model(&ReportGrant{}).Select("report_id").Where("kind = ?", GrantPublic)).
		Order("id").Limit(limit).Find(&out).Error
	return out, err
}

// ViewEventData builds report.viewed's data (the wire serializer).
type ViewEventData func(r *Report, viewer *Person, v *ReportView) ([]byte, error)

// ViewNotice is when report.viewed last fired for one viewer of one
// report: the row both serialises racing views and remembers the time.
type ViewNotice struct {
	ReportID   string    `gorm:"primaryKey;size:40"`
	ViewerID   string    `gorm:"primaryKey;size:40"`
	NotifiedAt time.Time `gorm:"not null"`
}

// RecordView records that viewer (nil: a public reader not signed in)
// opened version of r, and writes report.viewed unless that viewer was
// notified of less than every ago (the reports service's rule). The notice row is claimed by
// a conditional update, so of two racing views one notifies, and views
// of different readers never wait on each other.
func (s *ReportStore) RecordView(ctx context.Context, r *Report, version int, viewer *Person, every time.Duration, data ViewEventData) error {
	viewerID := ""
	if viewer != nil {
		viewerID = viewer.ID()
	}
	wrote := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		notify, err := claimEvery(tx, &ViewNotice{ReportID: r.ID, ViewerID: viewerID},
			map[string]any{"report_id": r.ID, "viewer_id": viewerID}, "notified_at", every, now)
		if err != nil {
			return err
		}
		v := &ReportView{ID: newID(ids.View), OrganizationID: r.OrganizationID, ReportID: r.ID, ViewerID: viewerID,
			Version: version, Notified: notify, At: now}
		if err := tx.Create(v).Error; err != nil || !v.Notified {
			return err
		}
		b, err := data(r, viewer, v)
		if err != nil {
			return err
		}
		wrote = true
		return reportEvent(tx, r, events.ReportViewed, b, now)
	})
	if wrote {
		s.changes.EventWritten()
	}
	return err
}

// Views lists a report's views, oldest first.
func (s *ReportStore) Views(ctx context.Context, reportID string) ([]ReportView, error) {
	var out []ReportView
	err := s.db.WithContext(ctx).Where("report_id = ?", reportID).Order("at, id").Find(&out).Error
	return out, err
}

// AccessEventData builds access.requested's data (the wire serializer).
type AccessEventData func(r *Report, person *Person) ([]byte, error)

// RequestAccess records that person asks to read r and writes
// access.requested, unless they asked less than every ago (the reports
// service's rule);
// it reports whether this request is new (so the owner is emailed).
func (s *ReportStore) RequestAccess(ctx context.Context, r *Report, person *Person, every time.Duration, data AccessEventData) (bool, error) {
	fresh := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		claimed, err := claimEvery(tx, &AccessRequest{ReportID: r.ID, PersonID: person.ID()},
			map[string]any{"report_id": r.ID, "person_id": person.ID()}, "requested_at", every, now)
		if err != nil || !claimed {
			return err
		}
		b, err := data(r, person)
		if err != nil {
			return err
		}
		fresh = true
		return reportEvent(tx, r, events.AccessRequested, b, now)
	})
	if fresh {
		s.changes.EventWritten()
	}
	return fresh, err
}

// claimEvery claims row, a throttle found by key whose column holds when
// it was last claimed, for now unless it was claimed less than every ago.
// The row is made first (its column zero: never claimed) if missing; the
// claim is one conditional update, so of two racing claims one wins, and
// claims of other keys never wait on each other.
func claimEvery(tx *gorm.DB, row any, key map[string]any, column string, every time.Duration, now time.Time) (bool, error) {
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error; err != nil {
		return false, err
	}
	res := tx.Model(row).Where(key).Where(column+" <= ?", now.Add(-every)).Update(column, now)
	return res.RowsAffected == 1, res.Error
}

// PurgeReaders removes used or expired reader tickets and the reader
// sessions whose app session has ended.
func (s *ReportStore) PurgeReaders(ctx context.Context) (int64, error) {
	db := s.db.WithContext(ctx)
	tickets := db.Where("used_at IS NOT NULL OR expires_at <= ?", Now()).Delete(&ReaderTicket{})
	if tickets.Error != nil {
		return 0, tickets.Error
	}
	readers := db.Where("session_id NOT IN (?)", db.Model(&Session{}).Select("id")).Delete(&ReaderSession{})
	return tickets.RowsAffected + readers.RowsAffected, readers.Error
}
