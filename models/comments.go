package models

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
)

// Thread states, and where a thread's quote stands in the report.
const (
	ThreadOpen     = "open"
	ThreadResolved = "resolved"
	// AnchorAnchored: the quote occurs once in the version the thread is
	// on; AnchorOutdated: a newer live version lost it; AnchorNone: the
	// thread quotes nothing.
	AnchorAnchored = "anchored"
	AnchorOutdated = "outdated"
	AnchorNone     = "none"
)

// CommentThread is a conversation on a report, about a quoted passage or
// the whole report.
type CommentThread struct {
	ID             string  `gorm:"primaryKey;size:40"`
	OrganizationID string  `gorm:"size:40;not null;index:idx_comment_threads_org_status,priority:1"`
	ReportID       string  `gorm:"size:40;not null;index"`
	ReviewID       *string `gorm:"size:40;index"`
	Status         string  `gorm:"size:20;not null;index:idx_comment_threads_org_status,priority:2"`
	// Quote is the passage as the reader selected it, whitespace
	// collapsed; Context the sentence around it; Path the file it is in.
	Quote   *string `gorm:"type:text"`
	Context string  `gorm:"type:text;not null"`
	Path    string  `gorm:"size:1024;not null"`
	// MadeOnVersion is the version the thread was opened on; AnchorVersion
	// the version its quote was last found in; CheckedVersion the live
	// version the quote was last looked for in (see comments' reanchor).
	MadeOnVersion  int    `gorm:"not null"`
	AnchorState    string `gorm:"size:20;not null"`
	AnchorVersion  int    `gorm:"not null"`
	CheckedVersion int    `gorm:"not null"`
	OpenedBy       string `gorm:"size:60;not null"`
	OpenedByName   string `gorm:"size:320;not null"`
	// ByReviewer marks a thread a reviewer opened on its review: it counts
	// in the review's threadCount.
	ByReviewer     bool `gorm:"not null"`
	ResolvedBy     *string
	ResolvedByName *string
	ResolutionNote *string `gorm:"type:text"`
	ResolvedAt     *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Comments       []Comment `gorm:"foreignKey:ThreadID"`
}

// Comment is one message in a thread.
type Comment struct {
	ID             string `gorm:"primaryKey;size:40"`
	OrganizationID string `gorm:"size:40;not null"`
	ThreadID       string `gorm:"size:40;not null;index"`
	ReportID       string `gorm:"size:40;not null"`
	// AuthorID is a member or guest id, or a key id for an agent;
	// AuthorKind says which (member, guest, agent).
	AuthorID   string         `gorm:"size:60;not null"`
	AuthorName string         `gorm:"size:320;not null"`
	AuthorKind string         `gorm:"size:20;not null"`
	Body       string         `gorm:"type:text;not null"`
	CreatedAt  time.Time      `gorm:"not null"`
	Images     []CommentImage `gorm:"foreignKey:CommentID"`
}

// CommentImage is an image attached to a comment, its bytes in the blob
// store under SHA256.
type CommentImage struct {
	CommentID   string `gorm:"primaryKey;size:40"`
	Position    int    `gorm:"primaryKey"`
	ReportID    string `gorm:"size:40;not null;index:idx_comment_images_report,priority:1"`
	SHA256      string `gorm:"size:64;not null;index:idx_comment_images_report,priority:2"`
	ContentType string `gorm:"size:40;not null"`
	Size        int64  `gorm:"not null"`
}

// CommentEventData builds comment.created's data (the wire serializer).
type CommentEventData func(*CommentThread, *Comment) ([]byte, error)

// NewComment is a comment to add: to a new thread when Thread has no id,
// else to that thread.
type NewComment struct {
	ReportID string
	Thread   *CommentThread
	Comment  *Comment
	By       Actor
}

// AddComment writes a comment, and its new thread when it opens one, with
// an audit entry on the report and comment.created, in one transaction.
// A reply needs its thread open, checked under the thread's row lock. A
// reviewer's new thread on a review counts in the review's threadCount.
func (s *CommentStore) AddComment(ctx context.Context, orgID string, in NewComment, data CommentEventData) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := take[Report](tx.Clauses(lockForUpdate(tx)...), orgID, in.ReportID, "report "+in.ReportID)
		if err != nil {
			return err
		}
		now := Now()
		t, c := in.Thread, in.Comment
		action := "commented"
		if t.ID == "" {
			t.ID, t.OrganizationID, t.ReportID, t.Status = newID(ids.Thread), orgID, r.ID, ThreadOpen
			t.CreatedAt, t.UpdatedAt = now, now
			if err := tx.Omit("Comments").Create(t).Error; err != nil {
				return err
			}
			if t.ByReviewer {
				if err := tx.Model(&Review{}).Where("id = ?", *t.ReviewID).UpdateColumn("thread_count", gorm.Expr("thread_count + 1")).Error; err != nil {
					return err
				}
			}
			action = "opened_thread"
		} else {
			locked, err := lockedThread(tx, orgID, r.ID, t.ID)
			if err != nil {
				return err
			}
			if locked.Status != ThreadOpen {
				return apperr.New(apperr.InvalidState, "thread %s is resolved; open a new one", t.ID)
			}
			*t = *locked
			t.UpdatedAt = now
			if err := tx.Model(t).UpdateColumn("updated_at", now).Error; err != nil {
				return err
			}
		}
		c.ID, c.OrganizationID, c.ThreadID, c.ReportID, c.CreatedAt = newID(ids.Comment), orgID, t.ID, r.ID, now
		if err := tx.Create(c).Error; err != nil {
			return err
		}
		_, err = s.reportStep(tx, r, nil, action, t.ID+": "+shortText(c.Body), in.By, events.CommentCreated,
			func(*Report, *ReportVersion) ([]byte, error) { return data(t, c) }, now)
		return err
	})
	if err == nil {
		s.reportChanged(in.ReportID, true)
	}
	return err
}

// shortText keeps an audit entry's detail to a line.
func shortText(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

// lockedThread reads report reportID's thread id under its row lock.
func lockedThread(tx *gorm.DB, orgID, reportID, id string) (*CommentThread, error) {
	var t CommentThread
	err := tx.Clauses(lockForUpdate(tx)...).Where("organization_id = ? AND report_id = ? AND id = ?", orgID, reportID, id).Take(&t).Error
	return &t, notFound(err, "thread "+id)
}

// withComments loads threads' comments, oldest first, and their images.
func withComments(q *gorm.DB) *gorm.DB {
	return q.Preload("Comments", func(db *gorm.DB) *gorm.DB { return db.Order("created_at, id") }).
		Preload("Comments.Images", func(db *gorm.DB) *gorm.DB { return db.Order("position") })
}

// Threads lists a report's threads with their comments, oldest first.
func (s *CommentStore) Threads(ctx context.Context, orgID, reportID string) ([]CommentThread, error) {
	var out []CommentThread
	err := withComments(s.db.WithContext(ctx)).Where("organization_id = ? AND report_id = ?", orgID, reportID).
		Order("created_at, id").Find(&out).Error
	return out, err
}

// Thread returns one of the organisation's threads with its comments.
func (s *CommentStore) Thread(ctx context.Context, orgID, id string) (*CommentThread, error) {
	return take[CommentThread](withComments(s.db.WithContext(ctx)), orgID, id, "thread "+id)
}

// OpenThreads pages through the organisation's open threads, newest first:
// for a person only those on reports they may read, for an agent (nil)
// all.
func (s *CommentStore) OpenThreads(ctx context.Context, orgID string, person *Person, p Page) ([]CommentThread, string, error) {
	db := s.db.WithContext(ctx)
	q := withComments(db).Where("organization_id = ? AND status = ?", orgID, ThreadOpen)
	if person != nil {
		q = q.Where("report_id IN (?)", readableBy(db.Model(&Report{}).Select("id").Where("organization_id = ?", orgID), db, person))
	}
	return list(q, p, ids.Thread, func(t *CommentThread) string { return t.ID })
}

// ResolveThread closes an open thread with a note; may says whether by
// may close this one, read under the lock.
func (s *CommentStore) ResolveThread(ctx context.Context, orgID, id string, by Actor, note string, may func(*CommentThread, *Report) error) (*CommentThread, error) {
	var reportID string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var t CommentThread
		if err := tx.Where("organization_id = ? AND id = ?", orgID, id).Take(&t).Error; err != nil {
			return notFound(err, "thread "+id)
		}
		r, err := take[Report](tx.Clauses(lockForUpdate(tx)...), orgID, t.ReportID, "report "+t.ReportID)
		if err != nil {
			return err
		}
		locked, err := lockedThread(tx, orgID, r.ID, id)
		if err != nil {
			return err
		}
		if err := may(locked, r); err != nil {
			return err
		}
		if locked.Status != ThreadOpen {
			return apperr.New(apperr.InvalidState, "thread %s is already resolved", id)
		}
		now := Now()
		reportID = r.ID
		if err := tx.Model(locked).Updates(map[string]any{"status": ThreadResolved, "resolved_by": by.ID, "resolved_by_name": by.Name,
			"resolution_note": note, "resolved_at": now, "updated_at": now}).Error; err != nil {
			return err
		}
		_, err = s.reportStep(tx, r, nil, "resolved_thread", id+": "+shortText(note), by, "", nil, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.reportChanged(reportID, false)
	return s.Thread(ctx, orgID, id)
}

// RetractComment deletes by's own last comment in an open thread, and the
// thread with it when nothing else is left, checked under the lock.
func (s *CommentStore) RetractComment(ctx context.Context, orgID, reportID, commentID string, by Actor) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		r, err := take[Report](tx.Clauses(lockForUpdate(tx)...), orgID, reportID, "report "+reportID)
		if err != nil {
			return err
		}
		var c Comment
		if err := tx.Where("organization_id = ? AND report_id = ? AND id = ?", orgID, r.ID, commentID).Take(&c).Error; err != nil {
			return notFound(err, "comment "+commentID)
		}
		t, err := lockedThread(tx, orgID, r.ID, c.ThreadID)
		if err != nil {
			return err
		}
		if c.AuthorID != by.ID {
			return apperr.New(apperr.Forbidden, "only its author may retract a comment")
		}
		if t.Status != ThreadOpen {
			return apperr.New(apperr.InvalidState, "thread %s is resolved; its comments stay", t.ID)
		}
		var last Comment
		if err := tx.Where("thread_id = ?", t.ID).Order("created_at DESC, id DESC").Take(&last).Error; err != nil {
			return err
		}
		if last.ID != c.ID {
			return apperr.New(apperr.InvalidState, "only the last comment of a thread may be retracted; %s has replies after it", c.ID)
		}
		if err := tx.Where("comment_id = ?", c.ID).Delete(&CommentImage{}).Error; err != nil {
			return err
		}
		if err := tx.Delete(&c).Error; err != nil {
			return err
		}
		var left int64
		if err := tx.Model(&Comment{}).Where("thread_id = ?", t.ID).Count(&left).Error; err != nil {
			return err
		}
		if left == 0 {
			if err := tx.Delete(t).Error; err != nil {
				return err
			}
			if t.ByReviewer {
				if err := tx.Model(&Review{}).Where("id = ?", *t.ReviewID).UpdateColumn("thread_count", gorm.Expr("thread_count - 1")).Error; err != nil {
					return err
				}
			}
		}
		_, err = s.reportStep(tx, r, nil, "retracted_comment", commentID+" in "+t.ID, by, "", nil, Now())
		return err
	})
	if err == nil {
		s.reportChanged(reportID, false)
	}
	return err
}

// Anchor is where a thread's quote now stands after a new live version
// was searched.
type Anchor struct {
	ThreadID       string
	State          string
	Version        int
	Path           string
	CheckedVersion int
}

// SetAnchors records where threads' quotes stand. A thread resolved
// meanwhile keeps its anchor all the same: it is where it was last seen.
func (s *CommentStore) SetAnchors(ctx context.Context, orgID string, anchors []Anchor) error {
	if len(anchors) == 0 {
		return nil // most reads: nothing moved since the last
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, a := range anchors {
			cols := map[string]any{"anchor_state": a.State, "checked_version": a.CheckedVersion}
			if a.State == AnchorAnchored {
				cols["anchor_version"], cols["path"] = a.Version, a.Path
			}
			if err := tx.Model(&CommentThread{}).Where("organization_id = ? AND id = ?", orgID, a.ThreadID).UpdateColumns(cols).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// CommentImageOf returns the image with digest sha attached to one of the
// report's comments, or not found.
func (s *CommentStore) CommentImageOf(ctx context.Context, reportID, sha string) (*CommentImage, error) {
	var img CommentImage
	err := s.db.WithContext(ctx).Where("report_id = ? AND sha256 = ?", reportID, sha).Take(&img).Error
	return &img, notFound(err, "image "+sha)
}
