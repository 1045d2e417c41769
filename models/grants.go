package models

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
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

// ShareEventData builds report.shared's data from the report and the
// grants added (the wire serializer, which models cannot import).
type ShareEventData func(r *Report, added []ReportGrant) ([]byte, error)

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

// sharedEvent writes report.shared with the grants added.
func sharedEvent(tx *gorm.DB, r *Report, added []ReportGrant, data ShareEventData, now time.Time) error {
	b, err := data(r, added)
	if err != nil {
		return err
	}
	return reportEvent(tx, r, events.ReportShared, b, now)
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

// Share adds grants to one of the organisation's reports, under its row
// lock, and writes report.shared with those added (none when every grant
// was already there). The grants were checked against the sharing rules
// of the report classified checkedAs; a reclassification since refuses.
func (s *ReportStore) Share(ctx context.Context, orgID, reportID string, grants []NewGrant, checkedAs string, by Actor, data ShareEventData) (*Report, []ReportGrant, error) {
	var r *Report
	var added []ReportGrant
	wrote := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = getReport(tx.Clauses(lockForUpdate(tx)...), orgID, reportID); err != nil {
			return err
		}
		if err := stillClassified(r, checkedAs); err != nil {
			return err
		}
		now := Now()
		if added, err = insertGrants(tx, r, grants, by, now); err != nil || len(added) == 0 {
			return err
		}
		if _, err = s.reportStep(tx, r, nil, "shared", grantNames(added), by, "", nil, now); err != nil {
			return err
		}
		wrote = true
		return sharedEvent(tx, r, added, data, now)
	})
	if err != nil {
		return nil, nil, err
	}
	s.reportChanged(r.ID, wrote)
	return r, added, nil
}

// Unshare removes the grants of one of the organisation's reports that
// remove picks, under the report's row lock, and returns them.
func (s *ReportStore) Unshare(ctx context.Context, orgID, reportID string, remove func([]ReportGrant) ([]ReportGrant, error), by Actor) (*Report, []ReportGrant, error) {
	return s.removeGrants(ctx, orgID, reportID, ReportSettings{}, func(_ *Report, have []ReportGrant) ([]ReportGrant, error) { return remove(have) }, by)
}

// ReportSettings are a report's sharing settings to change; nil ones stay.
type ReportSettings struct {
	Classification *string
	ShowViewers    *bool
}

// UpdateSettings changes a report's sharing settings and, when its
// classification changes, removes in the same step the grants remove
// picks as broken by the new level.
func (s *ReportStore) UpdateSettings(ctx context.Context, orgID, reportID string, set ReportSettings, remove func(*Report, []ReportGrant) ([]ReportGrant, error), by Actor) (*Report, []ReportGrant, error) {
	return s.removeGrants(ctx, orgID, reportID, set, remove, by)
}

// removeGrants applies set to the report, then removes the grants pick
// chooses: always when set is empty (an unshare), otherwise only when the
// classification changes.
func (s *ReportStore) removeGrants(ctx context.Context, orgID, reportID string, set ReportSettings, pick func(*Report, []ReportGrant) ([]ReportGrant, error), by Actor) (*Report, []ReportGrant, error) {
	var r *Report
	var removed []ReportGrant
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if r, err = getReport(tx.Clauses(lockForUpdate(tx)...), orgID, reportID); err != nil {
			return err
		}
		unshare := set.Classification == nil && set.ShowViewers == nil
		reclassified := set.Classification != nil && *set.Classification != r.Classification
		viewers := set.ShowViewers != nil && *set.ShowViewers != r.ShowViewers
		if !unshare && !reclassified && !viewers {
			return nil // nothing changes
		}
		action, details := "unshared", []string{}
		if viewers {
			r.ShowViewers = *set.ShowViewers
			action = "viewers hidden"
			if r.ShowViewers {
				action = "viewers shown"
			}
		}
		if reclassified {
			details = append(details, r.Classification+" → "+*set.Classification)
			if viewers {
				details = append(details, action)
			}
			action = "reclassified"
			r.Classification = *set.Classification
		}
		if unshare || reclassified {
			have, err := grantsOf(tx, r.ID)
			if err != nil {
				return err
			}
			if removed, err = pick(r, have); err != nil || (len(removed) == 0 && unshare) {
				return err
			}
		}
		if len(removed) > 0 {
			var gone []string
			for _, g := range removed {
				gone = append(gone, g.ID)
			}
			if err := tx.Where("id IN ?", gone).Delete(&ReportGrant{}).Error; err != nil {
				return err
			}
			if err := syncAudience(tx, r); err != nil {
				return err
			}
			details = append(details, "removed "+grantNames(removed))
		}
		_, err = s.reportStep(tx, r, nil, action, strings.Join(details, "; "), by, "", nil, Now())
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	s.changes.Changed(r.ID)
	return r, removed, nil
}

func grantNames(gs []ReportGrant) string {
	names := make([]string, len(gs))
	for i, g := range gs {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}

// Grants lists a report's grants in the order they were made.
func (s *ReportStore) Grants(ctx context.Context, reportID string) ([]ReportGrant, error) {
	return grantsOf(s.db.WithContext(ctx), reportID)
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
		reviewed := db.Model(&Review{}).Select("report_id").Where("organization_id = ? AND id IN (?)", person.Organization.ID,
			askedOf(db, events.RequestReview, person.ID()))
		return q.Where("(reports.owner_person AND reports.owner_id = ?) OR reports.id IN (?) OR reports.id IN (?)", person.ID(), grants, reviewed)
	}
	return q.Where("(reports.owner_person AND reports.owner_id = ?) OR reports.id IN (?)", person.ID(), grants)
}

// CanRead reports whether person may read r now; a nil person (nobody
// signed in) may read only a report granted to the public.
func (s *ReportStore) CanRead(ctx context.Context, r *Report, person *Person) (bool, error) {
	db := s.db.WithContext(ctx)
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

// stillClassified refuses grants checked against a classification the
// report no longer has: a reclassification ran between the check and the
// lock.
func stillClassified(r *Report, checkedAs string) error {
	if r.Classification != checkedAs {
		return apperr.New(apperr.InvalidState, "report %s was reclassified %s while this was checked; send it again", r.Slug, r.Classification)
	}
	return nil
}
