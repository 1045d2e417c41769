package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/assent-hq/assent/internal/ids"
)

// Reading a report on its own origin: the app issues a single-use ticket
// to a signed-in person it has checked, the report's host trades it for a
// reader session of its own. A reader session lives only as long as the
// app session it came from, so signing out of the app ends it too.
const (
	ReaderTicketLifetime = 60 * time.Second
)

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

// InsertReaderTicket writes a new reader ticket.
func (s *ReportStore) InsertReaderTicket(ctx context.Context, t *ReaderTicket) error {
	return s.conn(ctx).Create(t).Error
}

// ReaderTicketByHash reads the ticket whose token hashes to hash; no such
// ticket is NotFound.
func (s *ReportStore) ReaderTicketByHash(ctx context.Context, hash string) (*ReaderTicket, error) {
	return byToken[ReaderTicket](s.conn(ctx), "ticket_hash", hash, "reader ticket")
}

// MarkReaderTicketUsed marks the ticket used at now, unless it already
// was: of two redemptions racing, one changes the row.
func (s *ReportStore) MarkReaderTicketUsed(ctx context.Context, hash string, now time.Time) (bool, error) {
	res := s.conn(ctx).Model(&ReaderTicket{}).Where("ticket_hash = ? AND used_at IS NULL", hash).Update("used_at", now)
	return res.RowsAffected == 1, res.Error
}

// InsertReaderSession writes a new reader session.
func (s *ReportStore) InsertReaderSession(ctx context.Context, rs *ReaderSession) error {
	return s.conn(ctx).Create(rs).Error
}

// ReaderSessionOf reads report reportID's reader session whose token
// hashes to hash, with the app session it came from; either missing is
// NotFound.
func (s *ReportStore) ReaderSessionOf(ctx context.Context, hash, reportID string) (*Session, error) {
	db := s.conn(ctx)
	var rs ReaderSession
	if err := db.Where("token_hash = ? AND report_id = ?", hash, reportID).Take(&rs).Error; err != nil {
		return nil, notFound(err, "reader session")
	}
	var sess Session
	if err := db.Where("id = ?", rs.SessionID).Take(&sess).Error; err != nil {
		return nil, notFound(err, "session")
	}
	return &sess, nil
}

// HostedReport finds a report by the key its host is named with, and the
// origins its organisation lets its reports reach, in one statement: its
// host asks for both on every request.
func (s *ReportStore) HostedReport(ctx context.Context, key string) (*Report, StringList, error) {
	db := s.db.WithContext(ctx)
	cols, err := qualified(db, &Report{}, "reports")
	if err != nil {
		return nil, nil, err
	}
	var row struct {
		Report        `gorm:"embedded"`
		ReportOrigins StringList
	}
	err = db.Table("reports").Select(cols+", organizations.report_origins").
		Joins("JOIN organizations ON organizations.id = reports.organization_id").
		Where("reports.key = ?", key).Take(&row).Error
	if err != nil {
		return nil, nil, notFound(err, "report")
	}
	return &row.Report, row.ReportOrigins, nil
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

// ViewNotice is when report.viewed last fired for one viewer of one
// report: the row both serialises racing views and remembers the time.
type ViewNotice struct {
	ReportID   string    `gorm:"primaryKey;size:40"`
	ViewerID   string    `gorm:"primaryKey;size:40"`
	NotifiedAt time.Time `gorm:"not null"`
}

// ClaimViewNotice claims, in ctx's transaction, viewerID's notice of
// reportID's views for now, unless claimed less than every ago: of two
// racing views one claims it, and views of different readers never wait
// on each other. "" is a public reader not signed in.
func (s *ReportStore) ClaimViewNotice(ctx context.Context, reportID, viewerID string, every time.Duration, now time.Time) (bool, error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	return claimEvery(st.tx, &ViewNotice{ReportID: reportID, ViewerID: viewerID},
		map[string]any{"report_id": reportID, "viewer_id": viewerID}, "notified_at", every, now)
}

// InsertView writes a view, in ctx's transaction.
func (s *ReportStore) InsertView(ctx context.Context, v *ReportView) error {
	if v.ID == "" {
		v.ID = newID(ids.View)
	}
	return insertIn(ctx, v)
}

// Views lists a report's views, oldest first.
func (s *ReportStore) Views(ctx context.Context, reportID string) ([]ReportView, error) {
	var out []ReportView
	err := s.db.WithContext(ctx).Where("report_id = ?", reportID).Order("at, id").Find(&out).Error
	return out, err
}

// ClaimAccessRequest claims, in ctx's transaction, personID's request to
// read reportID for now, unless claimed less than every ago: of two racing
// requests one claims it.
func (s *ReportStore) ClaimAccessRequest(ctx context.Context, reportID, personID string, every time.Duration, now time.Time) (bool, error) {
	st, err := inTx(ctx)
	if err != nil {
		return false, err
	}
	return claimEvery(st.tx, &AccessRequest{ReportID: reportID, PersonID: personID},
		map[string]any{"report_id": reportID, "person_id": personID}, "requested_at", every, now)
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
