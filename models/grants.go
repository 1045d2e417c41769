package models

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
)

// Kinds of grant that name no one: every active member, and anyone with
// the link. The others are ApproverMember, ApproverGuest and the team
// kinds.
const (
	GrantEveryone = "everyone"
	GrantPublic   = "public"
)

// ReportGrant lets an audience read a report: a member, a guest, a team
// (whoever is in it when they read), every active member, or anyone with
// the link. The report's owner reads it without one.
type ReportGrant struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null;index"`
	ReportID       string `gorm:"size:40;not null;uniqueIndex:idx_report_grants_subject,priority:1"`
	Kind           string `gorm:"size:20;not null;uniqueIndex:idx_report_grants_subject,priority:2"`
	// SubjectID is the person or team, "" for everyone and public.
	SubjectID string `gorm:"size:40;not null;uniqueIndex:idx_report_grants_subject,priority:3;index"`
	// Name is the phrase that names the grant again: an email, a team's
	// name, `everyone` or `public`.
	Name          string `gorm:"size:320;not null"`
	GrantedBy     string `gorm:"size:60;not null"`
	GrantedByName string `gorm:"size:320;not null"`
	CreatedAt     time.Time
}

// NewGrant is a grant to make.
type NewGrant struct {
	Kind, SubjectID, Name string
}

// insertGrants adds the grants r does not have yet and returns them.
func insertGrants(tx *gorm.DB, r *Report, grants []NewGrant, by Actor, now time.Time) ([]ReportGrant, error) {
	have, err := grantsOf(tx, r.ID)
	if err != nil {
		return nil, err
	}
	var added []ReportGrant
	for _, n := range grants {
		dup := false
		for _, h := range append(have, added...) {
			dup = dup || (h.Kind == n.Kind && h.SubjectID == n.SubjectID)
		}
		if dup {
			continue
		}
		added = append(added, ReportGrant{ID: newID(ids.Grant), OrganizationID: r.OrganizationID, ReportID: r.ID,
			Kind: n.Kind, SubjectID: n.SubjectID, Name: n.Name, GrantedBy: by.ID, GrantedByName: by.Name, CreatedAt: now})
	}
	if len(added) > 0 {
		if err := tx.Create(&added).Error; err != nil {
			return nil, err
		}
	}
	return added, syncAudience(tx, r)
}

// syncAudience makes the report's audience list name its grants, in the
// order they were made.
func syncAudience(tx *gorm.DB, r *Report) error {
	var names []string
	if err := tx.Model(&ReportGrant{}).Where("report_id = ?", r.ID).Order("created_at, id").Pluck("name", &names).Error; err != nil {
		return err
	}
	r.Audience = append(StringList{}, names...)
	return nil
}

// AddGrants adds the grants r does not have yet, in ctx's transaction,
// and returns them; r's audience names them after.
func (s *ReportStore) AddGrants(ctx context.Context, r *Report, grants []NewGrant, by Actor, at time.Time) ([]ReportGrant, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	return insertGrants(st.tx, r, grants, by, at)
}

// DeleteGrants removes r's grants gone, in ctx's transaction; r's
// audience no longer names them.
func (s *ReportStore) DeleteGrants(ctx context.Context, r *Report, gone []ReportGrant) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	ids := make([]string, len(gone))
	for i, g := range gone {
		ids[i] = g.ID
	}
	if err := st.tx.Where("report_id = ? AND id IN ?", r.ID, ids).Delete(&ReportGrant{}).Error; err != nil {
		return err
	}
	return syncAudience(st.tx, r)
}

// GrantNames lists grants by the phrases that name them, for audit details.
func GrantNames(gs []ReportGrant) string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}

// Grants lists a report's grants in the order they were made.
func (s *ReportStore) Grants(ctx context.Context, reportID string) ([]ReportGrant, error) {
	return grantsOf(s.conn(ctx), reportID)
}

func grantsOf(q *gorm.DB, reportID string) ([]ReportGrant, error) {
	var out []ReportGrant
	err := q.Where("report_id = ?", reportID).Order("created_at, id").Find(&out).Error
	return out, err
}

// readableBy narrows q (over reports) to those person may read: owned, or
// granted to them, a team they are in, every member, or the public. An
// owner or administrator also reads a report a review asked them to
// review: they may be asked about any report of their organisation,
// which they could share with themselves anyway, without being added to
// its audience.
func readableBy(q *gorm.DB, db *gorm.DB, person *Person) *gorm.DB {
	grants := db.Model(&ReportGrant{}).Select("report_id").Where("kind = ? OR subject_id = ?", GrantPublic, person.ID())
	if person.Member != nil {
		grants = db.Model(&ReportGrant{}).Select("report_id").Where("kind IN ? OR subject_id = ? OR subject_id IN (?)",
			[]string{GrantPublic, GrantEveryone}, person.ID(),
			db.Table("team_members").Select("team_id").Where("member_id = ?", person.ID()))
	}
	q = q.Where("reports.organization_id = ?", person.Organization.ID)
	if person.Member != nil && person.Member.Administers() {
		reviewed := db.Table("reviews").Select("report_id").Where("organization_id = ? AND id IN (?)", person.Organization.ID,
			askedOf(db, events.RequestReview, person.ID()))
		return q.Where("(reports.owner_person AND reports.owner_id = ?) OR reports.id IN (?) OR reports.id IN (?)", person.ID(), grants, reviewed)
	}
	return q.Where("(reports.owner_person AND reports.owner_id = ?) OR reports.id IN (?)", person.ID(), grants)
}

// CanRead reports whether person may read r now; a nil person (nobody
// signed in) may read only a report granted to the public.
func (s *ReportStore) CanRead(ctx context.Context, r *Report, person *Person) (bool, error) {
	// A resolve asks inside its transaction; on SQLite a read beside it
	// waits for a connection its queued writers hold.
	db := s.conn(ctx)
	if person == nil {
		var n int64
		err := db.Model(&ReportGrant{}).Where("report_id = ? AND kind = ?", r.ID, GrantPublic).Count(&n).Error
		return n > 0, err
	}
	if person.Organization.ID != r.OrganizationID || (person.Member != nil && !person.Member.Active) {
		return false, nil
	}
	var n int64
	err := readableBy(db.Model(&Report{}), db, person).Where("reports.id = ?", r.ID).Count(&n).Error
	return n > 0, err
}

// ReadableReports lists the live, unarchived reports person may read,
// most recently updated first.
func (s *ReportStore) ReadableReports(ctx context.Context, person *Person, limit int) ([]Report, error) {
	db := s.db.WithContext(ctx)
	var out []Report
	err := readableBy(db.Model(&Report{}), db, person).Where("NOT reports.archived AND reports.live_version IS NOT NULL").
		Order("reports.updated_at DESC, reports.id").Limit(limit).Find(&out).Error
	return out, err
}
