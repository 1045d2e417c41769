// Package comments is the domain of comment threads on reports: a reader
// quotes a passage (which must occur exactly once in the version it is
// about) or talks about the whole report, others reply, and a thread is
// resolved with a note. Threads follow the live version (reanchor), and a
// revision brief (brief.go) turns the open ones into one prompt for the
// next version.
package comments

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/passages"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/wire"
)

// Store is what the comment operations read and write: threads and
// comments (their own queries, Comments), the report they are on (locked,
// and its trail), the reviews of it, and the outbox.
type Store interface {
	Comments() *models.CommentStore
	Tx(ctx context.Context, fn func(ctx context.Context) error) error
	Changed(ctx context.Context, id string)
	Emit(ctx context.Context, e *models.Event) error

	LockReport(ctx context.Context, orgID, idOrSlug string) (*models.Report, error)
	ReportStep(ctx context.Context, r *models.Report, action, detail string, by models.Actor, at time.Time) error
	GetVersionNumber(ctx context.Context, r *models.Report, n int) (*models.ReportVersion, error)
	// The reviews a thread may belong to (reviews.Records).
	models.RequestsHost
}

// Deps are what the service needs.
type Deps struct {
	Store   Store
	Blobs   *blobstore.Store
	Reports *reports.Service
	Logger  *slog.Logger
	BaseURL string
}

// Service runs the comment operations; build one per process.
type Service struct {
	Deps
}

// New returns the service.
func New(d Deps) *Service {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Service{Deps: d}
}

// authorKind names the caller on a comment.
func authorKind(c models.Actor) string {
	switch {
	case c.Person == nil:
		return "agent"
	case c.Person.Guest != nil:
		return models.ApproverGuest
	}
	return models.ApproverMember
}

// Limits of a comment.
const (
	MaxImages     = 4
	MaxImageBytes = 5 << 20
	MaxQuote      = 1000
)

// ImageInput is an attached image, base64-encoded; its type is read from
// its bytes.
type ImageInput struct {
	Data string `json:"data" validate:"required"`
}

// PostInput opens a thread (no threadId) or replies to one.
type PostInput struct {
	Body     string       `json:"body" validate:"required,notblank,max=20000"`
	Quote    *string      `json:"quote" validate:"omitempty,max=1000" nullable:"true"`
	ThreadID *string      `json:"threadId" validate:"omitempty,max=40" nullable:"true"`
	ReviewID *string      `json:"reviewId" validate:"omitempty,max=40" nullable:"true"`
	Images   []ImageInput `json:"images" validate:"max=4,dive" nullable:"true"`
}

// Post adds a comment to a report the caller may read.
func (s *Service) Post(ctx context.Context, c models.Actor, idOrSlug string, in *PostInput) (*models.CommentThread, error) {
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	r, err := s.Reports.Readable(ctx, c, idOrSlug)
	if err != nil {
		return nil, err
	}
	if r.Archived {
		return nil, apperr.New(apperr.InvalidState, "report %s is archived; restore it before commenting", r.Slug)
	}
	comment := &models.Comment{AuthorID: c.ID, AuthorName: c.Name, AuthorKind: authorKind(c), Body: strings.TrimSpace(in.Body)}
	if comment.Images, err = s.storeImages(ctx, r.ID, in.Images); err != nil {
		return nil, err
	}
	thread := &models.CommentThread{}
	if in.ThreadID != nil {
		if in.Quote != nil || in.ReviewID != nil {
			field := "quote"
			if in.Quote == nil {
				field = "reviewId"
			}
			return nil, apperr.Field(apperr.InvalidRequest, field, "a reply takes no %s: it belongs to its thread's", field)
		}
		thread.ID = *in.ThreadID
	} else if thread, err = s.newThread(ctx, c, r, in); err != nil {
		return nil, err
	}
	if err := s.add(ctx, c, r.ID, thread, comment); err != nil {
		return nil, err
	}
	return s.Store.Comments().Thread(ctx, c.OrgID(), thread.ID)
}

// add writes comment, and thread when it opens one (no id yet), with an
// audit entry on the report and comment.created, in one transaction under
// the report's row lock. A reply needs its thread open, checked under the
// thread's lock. A reviewer's new thread counts in the review's
// threadCount.
func (s *Service) add(ctx context.Context, c models.Actor, reportID string, thread *models.CommentThread, comment *models.Comment) error {
	return s.Store.Tx(ctx, func(ctx context.Context) error {
		r, err := s.Store.LockReport(ctx, c.OrgID(), reportID)
		if err != nil {
			return err
		}
		now := models.Now()
		action := "commented"
		if thread.ID == "" {
			if err := s.Store.Comments().InsertThread(ctx, r, thread, now); err != nil {
				return err
			}
			if thread.ByReviewer {
				if err := s.Store.Comments().CountReviewThread(ctx, *thread.ReviewID, 1); err != nil {
					return err
				}
			}
			action = "opened_thread"
		} else {
			locked, err := s.Store.Comments().LockThread(ctx, c.OrgID(), r.ID, thread.ID)
			if err != nil {
				return err
			}
			if locked.Status != models.ThreadOpen {
				return apperr.New(apperr.InvalidState, "thread %s is resolved; open a new one", thread.ID)
			}
			*thread = *locked
			if err := s.Store.Comments().TouchThread(ctx, thread, now); err != nil {
				return err
			}
		}
		if err := s.Store.Comments().InsertComment(ctx, thread, comment, now); err != nil {
			return err
		}
		if err := s.Store.ReportStep(ctx, r, action, thread.ID+": "+shortText(comment.Body), c, now); err != nil {
			return err
		}
		data, err := json.Marshal(wire.NewCommentEvent(r, thread, comment, s.BaseURL))
		if err != nil {
			return err
		}
		s.Store.Changed(ctx, r.ID)
		return s.Store.Emit(ctx, models.ReportEvent(r, events.CommentCreated, data, now))
	})
}

// newThread anchors a new thread: to the review's pinned version when it
// belongs to a review, else to the live version.
func (s *Service) newThread(ctx context.Context, c models.Actor, r *models.Report, in *PostInput) (*models.CommentThread, error) {
	t := &models.CommentThread{OpenedBy: c.ID, OpenedByName: c.Name, AnchorState: models.AnchorNone}
	var v *models.ReportVersion
	var err error
	if in.ReviewID != nil {
		review, err := reviews.Records(s.Store).Get(ctx, c.OrgID(), *in.ReviewID)
		if err == nil && review.ReportID != r.ID {
			err = apperr.New(apperr.NotFound, "review %s is not about report %s", *in.ReviewID, r.Slug)
		}
		if err != nil {
			return nil, fieldOf(err, "reviewId")
		}
		t.ReviewID = &review.ID
		t.ByReviewer = c.Person != nil && slices.Contains(review.ReviewerIDs, c.Person.ID())
		v, err = s.Store.GetVersionNumber(ctx, r, review.Version)
		if err != nil {
			return nil, err
		}
	} else if v, err = s.Reports.LiveVersion(ctx, r); err != nil {
		return nil, err
	}
	t.MadeOnVersion, t.CheckedVersion = v.Version, v.Version
	if in.Quote == nil {
		return t, nil
	}
	quote := passages.Normalize(*in.Quote)
	if quote == "" {
		return nil, apperr.Field(apperr.InvalidRequest, "quote", "quote must hold some text")
	}
	found, err := s.locate(ctx, v, quote)
	if err != nil {
		return nil, err
	}
	switch found.count {
	case 0:
		return nil, apperr.Field(apperr.QuoteNotFound, "quote", "the quote does not occur in version %d of %s", v.Version, r.Slug)
	case 1:
	default:
		return nil, apperr.Field(apperr.QuoteAmbiguous, "quote", "the quote occurs %d times in version %d of %s: select more of the passage", found.count, v.Version, r.Slug)
	}
	t.Quote, t.Context, t.Path = &quote, found.context, found.path
	t.AnchorState, t.AnchorVersion = models.AnchorAnchored, v.Version
	return t, nil
}

// fieldOf names field on a not-found error.
func fieldOf(err error, field string) error {
	if e, ok := apperr.As(err); ok && e.Code == apperr.NotFound {
		return apperr.Field(e.Code, field, "%s", e.Message)
	}
	return err
}

// found is where a quote occurs in a version: how often, and for a single
// occurrence the file and the sentence around it.
type found struct {
	count   int
	path    string
	context string
}

// locate counts quote in the text of every HTML file of v.
func (s *Service) locate(ctx context.Context, v *models.ReportVersion, quote string) (found, error) {
	var out found
	for _, f := range v.Files.V {
		if ext := strings.ToLower(path.Ext(f.Path)); ext != ".html" && ext != ".htm" {
			continue
		}
		b, err := s.Blobs.Get(ctx, f.SHA256)
		if err != nil {
			return out, fmt.Errorf("version %d file %s: %w", v.Version, f.Path, err)
		}
		doc := passages.Read(b)
		n, at := passages.Count(doc.Text, quote)
		if n > 0 && out.count == 0 {
			out.path, out.context = f.Path, doc.Sentence(at, len(quote))
		}
		out.count += n
	}
	return out, nil
}

// imageTypes are the image types a comment may carry.
var imageTypes = []string{"image/png", "image/jpeg", "image/webp"}

// storeImages checks each image's size and type and puts it in the blob
// store.
func (s *Service) storeImages(ctx context.Context, reportID string, in []ImageInput) ([]models.CommentImage, error) {
	var out []models.CommentImage
	for i, img := range in {
		field := fmt.Sprintf("images[%d].data", i)
		b, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil {
			return nil, apperr.Field(apperr.InvalidRequest, field, "%s must be base64", field)
		}
		if len(b) > MaxImageBytes {
			return nil, apperr.Field(apperr.PayloadTooLarge, field, "an image may be at most 5 MB; this one is %d bytes", len(b))
		}
		kind := http.DetectContentType(b)
		if !slices.Contains(imageTypes, kind) {
			return nil, apperr.Field(apperr.InvalidRequest, field, "an image must be PNG, JPEG or WebP, not %s", kind)
		}
		sum, err := s.Blobs.Put(ctx, b)
		if err != nil {
			return nil, err
		}
		out = append(out, models.CommentImage{Position: i, ReportID: reportID, SHA256: sum, ContentType: kind, Size: int64(len(b))})
	}
	return out, nil
}

// Threads lists a report's threads, their anchors brought up to its live
// version first.
func (s *Service) Threads(ctx context.Context, c models.Actor, idOrSlug string) (*models.Report, []models.CommentThread, error) {
	r, err := s.Reports.Readable(ctx, c, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	threads, err := s.Store.Comments().Threads(ctx, c.OrgID(), r.ID)
	if err != nil {
		return nil, nil, err
	}
	return r, threads, s.reanchor(ctx, r, threads)
}

// Open pages through the open threads across the organisation that the
// caller may read.
func (s *Service) Open(ctx context.Context, c models.Actor, p models.Page) ([]models.CommentThread, string, error) {
	return s.Store.Comments().OpenThreads(ctx, c.OrgID(), c.Person, p)
}

// ResolveInput closes a thread.
type ResolveInput struct {
	Note string `json:"note" validate:"max=20000"`
}

// Resolve closes an open thread with a note: its opener, the report's
// owner or an administrator, or an agent key may.
func (s *Service) Resolve(ctx context.Context, c models.Actor, threadID string, in *ResolveInput) (*models.CommentThread, error) {
	if err := validate.Struct(in); err != nil {
		return nil, err
	}
	note := strings.TrimSpace(in.Note)
	var t *models.CommentThread
	err := s.Store.Tx(ctx, func(ctx context.Context) error {
		reportID, err := s.Store.Comments().ReportOfThread(ctx, c.OrgID(), threadID)
		if err != nil {
			return err
		}
		r, err := s.Store.LockReport(ctx, c.OrgID(), reportID)
		if err != nil {
			return err
		}
		if t, err = s.Store.Comments().LockThread(ctx, c.OrgID(), r.ID, threadID); err != nil {
			return err
		}
		if err := s.mayResolve(ctx, c, t, r); err != nil {
			return err
		}
		if t.Status != models.ThreadOpen {
			return apperr.New(apperr.InvalidState, "thread %s is already resolved", threadID)
		}
		now := models.Now()
		t.Resolve(c, note, now)
		if err := s.Store.Comments().SaveResolution(ctx, t); err != nil {
			return err
		}
		s.Store.Changed(ctx, r.ID)
		return s.Store.ReportStep(ctx, r, "resolved_thread", threadID+": "+shortText(note), c, now)
	})
	if err != nil {
		return nil, err
	}
	return s.Store.Comments().Thread(ctx, c.OrgID(), threadID)
}

// mayResolve refuses c resolving t on r unless c opened it or manages r
// (reports.Manages); a person must still be able to read r.
func (s *Service) mayResolve(ctx context.Context, c models.Actor, t *models.CommentThread, r *models.Report) error {
	if c.Person != nil {
		if _, err := s.Reports.Readable(ctx, c, r.ID); err != nil {
			return err
		}
	}
	if t.OpenedBy != c.ID && !reports.Manages(r, c) {
		return apperr.New(apperr.Forbidden, "only who opened the thread, the report's owner or an administrator may resolve it")
	}
	return nil
}

// Retract deletes the caller's own last comment in a thread nobody has
// resolved.
func (s *Service) Retract(ctx context.Context, c models.Actor, idOrSlug, commentID string) error {
	readable, err := s.Reports.Readable(ctx, c, idOrSlug)
	if err != nil {
		return err
	}
	return s.Store.Tx(ctx, func(ctx context.Context) error {
		r, err := s.Store.LockReport(ctx, c.OrgID(), readable.ID)
		if err != nil {
			return err
		}
		cm, err := s.Store.Comments().GetComment(ctx, c.OrgID(), r.ID, commentID)
		if err != nil {
			return err
		}
		t, err := s.Store.Comments().LockThread(ctx, c.OrgID(), r.ID, cm.ThreadID)
		if err != nil {
			return err
		}
		if cm.AuthorID != c.ID {
			return apperr.New(apperr.Forbidden, "only its author may retract a comment")
		}
		if t.Status != models.ThreadOpen {
			return apperr.New(apperr.InvalidState, "thread %s is resolved; its comments stay", t.ID)
		}
		last, err := s.Store.Comments().LastComment(ctx, t.ID)
		if err != nil {
			return err
		}
		if last.ID != cm.ID {
			return apperr.New(apperr.InvalidState, "only the last comment of a thread may be retracted; %s has replies after it", cm.ID)
		}
		left, err := s.Store.Comments().DeleteComment(ctx, cm)
		if err != nil {
			return err
		}
		if left == 0 {
			if err := s.Store.Comments().DeleteThread(ctx, t); err != nil {
				return err
			}
			if t.ByReviewer {
				if err := s.Store.Comments().CountReviewThread(ctx, *t.ReviewID, -1); err != nil {
					return err
				}
			}
		}
		s.Store.Changed(ctx, r.ID)
		return s.Store.ReportStep(ctx, r, "retracted_comment", commentID+" in "+t.ID, c, models.Now())
	})
}

// Image returns an image attached to one of the report's comments, for a
// caller who may read the report.
func (s *Service) Image(ctx context.Context, c models.Actor, idOrSlug, sha string) (*models.CommentImage, []byte, error) {
	r, err := s.Reports.Readable(ctx, c, idOrSlug)
	if err != nil {
		return nil, nil, err
	}
	img, err := s.Store.Comments().CommentImageOf(ctx, r.ID, sha)
	if err != nil {
		return nil, nil, err
	}
	b, err := s.Blobs.Get(ctx, img.SHA256)
	return img, b, err
}

// reanchor looks for the quote of each open thread of r (review threads
// excepted: they stay on their pinned version) in r's live version, once
// per live version: found once, the thread is anchored there; otherwise
// it is outdated, keeping the version it was last found in. threads are
// r's, and are updated as stored.
func (s *Service) reanchor(ctx context.Context, r *models.Report, threads []models.CommentThread) error {
	if r.LiveVersion == nil {
		return nil
	}
	var live *models.ReportVersion
	var anchors []models.Anchor
	for i := range threads {
		t := &threads[i]
		if t.Status != models.ThreadOpen || t.ReviewID != nil || t.Quote == nil || t.CheckedVersion == *r.LiveVersion {
			continue
		}
		var err error
		if live == nil {
			if live, err = s.Reports.LiveVersion(ctx, r); err != nil {
				return err
			}
		}
		f, err := s.locate(ctx, live, *t.Quote)
		if err != nil {
			return err
		}
		t.AnchorState, t.CheckedVersion = models.AnchorOutdated, live.Version
		if f.count == 1 {
			t.AnchorState, t.AnchorVersion, t.Path = models.AnchorAnchored, live.Version, f.path
		}
		anchors = append(anchors, models.Anchor{ThreadID: t.ID, State: t.AnchorState, Version: t.AnchorVersion, Path: t.Path,
			CheckedVersion: t.CheckedVersion})
	}
	return s.Store.Comments().SetAnchors(ctx, r.OrganizationID, anchors)
}

// shortText keeps an audit entry's detail to a line.
func shortText(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}
