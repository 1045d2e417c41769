package models

import (
	"context"
	"time"

	"gorm.io/gorm"

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

// LockReport reads one of the organisation's reports, by id or slug,
// under its row lock, for the rest of ctx's transaction: a report's
// versions, grants, comments and steps are written one at a time.
func (s *core) LockReport(ctx context.Context, orgID, idOrSlug string) (*Report, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	return getReport(st.tx.Clauses(lockForUpdate(st.tx)...), orgID, idOrSlug)
}

// ReportStep numbers r's next step, saves r and appends the step's audit
// entry, in ctx's transaction.
func (s *core) ReportStep(ctx context.Context, r *Report, action, detail string, by Actor, at time.Time) error {
	st, err := inTx(ctx)
	if err != nil {
		return err
	}
	return reportStep(st.tx, r, action, detail, by, at)
}

// InsertThread writes a new thread of report r, open, at at.
func (s *CommentStore) InsertThread(ctx context.Context, r *Report, t *CommentThread, at time.Time) error {
	t.ID, t.OrganizationID, t.ReportID, t.Status = newID(ids.Thread), r.OrganizationID, r.ID, ThreadOpen
	t.CreatedAt, t.UpdatedAt = at, at
	return s.conn(ctx).Omit("Comments").Create(t).Error
}

// CountReviewThread adds delta to a review's count of its reviewers'
// threads.
func (s *CommentStore) CountReviewThread(ctx context.Context, reviewID string, delta int) error {
	return s.conn(ctx).Table("reviews").Where("id = ?", reviewID).
		UpdateColumn("thread_count", gorm.Expr("thread_count + ?", delta)).Error
}

// ReportOfThread returns the report one of the organisation's threads is
// on, reading the thread alone.
func (s *CommentStore) ReportOfThread(ctx context.Context, orgID, id string) (string, error) {
	t, err := take[CommentThread](s.conn(ctx).Select("id, report_id"), orgID, id, "thread "+id)
	if err != nil {
		return "", err
	}
	return t.ReportID, nil
}

// LockThread reads report reportID's thread id under its row lock, for
// the rest of ctx's transaction.
func (s *CommentStore) LockThread(ctx context.Context, orgID, reportID, id string) (*CommentThread, error) {
	st, err := inTx(ctx)
	if err != nil {
		return nil, err
	}
	return lockedThread(st.tx, orgID, reportID, id)
}

// TouchThread marks t as changed at at.
func (s *CommentStore) TouchThread(ctx context.Context, t *CommentThread, at time.Time) error {
	t.UpdatedAt = at
	return s.conn(ctx).Model(t).UpdateColumn("updated_at", at).Error
}

// Resolve closes t with note, by by at at.
func (t *CommentThread) Resolve(by Actor, note string, at time.Time) {
	t.Status, t.ResolvedBy, t.ResolvedByName, t.ResolutionNote = ThreadResolved, &by.ID, &by.Name, &note
	t.ResolvedAt, t.UpdatedAt = &at, at
}

// SaveResolution writes t's resolution.
func (s *CommentStore) SaveResolution(ctx context.Context, t *CommentThread) error {
	return s.conn(ctx).Model(t).Updates(map[string]any{"status": t.Status, "resolved_by": t.ResolvedBy,
		"resolved_by_name": t.ResolvedByName, "resolution_note": t.ResolutionNote, "resolved_at": t.ResolvedAt,
		"updated_at": t.UpdatedAt}).Error
}

// DeleteThread removes an emptied thread.
func (s *CommentStore) DeleteThread(ctx context.Context, t *CommentThread) error {
	return s.conn(ctx).Delete(t).Error
}

// InsertComment writes c, with its images, in thread t at at.
func (s *CommentStore) InsertComment(ctx context.Context, t *CommentThread, c *Comment, at time.Time) error {
	c.ID, c.OrganizationID, c.ThreadID, c.ReportID, c.CreatedAt = newID(ids.Comment), t.OrganizationID, t.ID, t.ReportID, at
	return s.conn(ctx).Create(c).Error
}

// GetComment returns one of report reportID's comments.
func (s *CommentStore) GetComment(ctx context.Context, orgID, reportID, id string) (*Comment, error) {
	var c Comment
	err := s.conn(ctx).Where("organization_id = ? AND report_id = ? AND id = ?", orgID, reportID, id).Take(&c).Error
	return &c, notFound(err, "comment "+id)
}

// LastComment returns thread threadID's newest comment.
func (s *CommentStore) LastComment(ctx context.Context, threadID string) (*Comment, error) {
	var c Comment
	err := s.conn(ctx).Where("thread_id = ?", threadID).Order("created_at DESC, id DESC").Take(&c).Error
	return &c, err
}

// DeleteComment removes c and its images; it reports how many comments
// its thread has left.
func (s *CommentStore) DeleteComment(ctx context.Context, c *Comment) (left int64, err error) {
	db := s.conn(ctx)
	if err := db.Where("comment_id = ?", c.ID).Delete(&CommentImage{}).Error; err != nil {
		return 0, err
	}
	if err := db.Delete(c).Error; err != nil {
		return 0, err
	}
	err = db.Model(&Comment{}).Where("thread_id = ?", c.ThreadID).Count(&left).Error
	return left, err
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
	return take[CommentThread](withComments(s.conn(ctx)), orgID, id, "thread "+id)
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
