package wire

import (
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
)

// Thread is a comment thread on the wire, with its comments.
type Thread struct {
	ID       string  `json:"id"`
	ReportID string  `json:"reportId"`
	ReviewID *string `json:"reviewId"`
	Status   string  `json:"status"`
	// Quote is the passage the thread is about, or null for the whole
	// report; Context the sentence around it; Path the file it is in.
	Quote         *string       `json:"quote"`
	Context       string        `json:"context"`
	Path          string        `json:"path"`
	Anchor        Anchor        `json:"anchor"`
	MadeOnVersion int           `json:"madeOnVersion"`
	OpenedBy      Author        `json:"openedBy"`
	Resolution    *Resolution   `json:"resolution"`
	Comments      []Comment     `json:"comments"`
	CreatedAt     wiretime.Time `json:"createdAt"`
	UpdatedAt     wiretime.Time `json:"updatedAt"`
}

// Anchor is where a thread's quote stands: anchored in version, outdated
// (last found in version), or none (no quote).
type Anchor struct {
	State   string `json:"state"`
	Version *int   `json:"version"`
}

// Author is who wrote a comment or opened a thread.
type Author struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// Resolution is how a thread was closed.
type Resolution struct {
	By   Author        `json:"by"`
	Note string        `json:"note"`
	At   wiretime.Time `json:"at"`
}

// Comment is one comment.
type Comment struct {
	ID        string         `json:"id"`
	Author    Author         `json:"author"`
	Body      string         `json:"body"`
	Images    []CommentImage `json:"images"`
	CreatedAt wiretime.Time  `json:"createdAt"`
}

// CommentImage is an image attached to a comment; url serves it to who
// may read the report.
type CommentImage struct {
	SHA256      string `json:"sha256"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	URL         string `json:"url"`
}

// CommentImageURL is where the API serves one of a report's comment images.
func CommentImageURL(baseURL, reportID, sha string) string {
	return baseURL + "/api/v1/reports/" + reportID + "/comments/images/" + sha
}

// NewThread serializes t with its comments.
func NewThread(t *models.CommentThread, baseURL string) Thread {
	out := Thread{ID: t.ID, ReportID: t.ReportID, ReviewID: t.ReviewID, Status: t.Status, Quote: t.Quote, Context: t.Context,
		Path: t.Path, Anchor: Anchor{State: t.AnchorState}, MadeOnVersion: t.MadeOnVersion,
		OpenedBy: Author{ID: t.OpenedBy, Name: t.OpenedByName}, Comments: All(t.Comments, func(c *models.Comment) Comment { return NewComment(c, baseURL) }),
		CreatedAt: wiretime.New(t.CreatedAt), UpdatedAt: wiretime.New(t.UpdatedAt)}
	if t.AnchorState != models.AnchorNone {
		v := t.AnchorVersion
		out.Anchor.Version = &v
	}
	if t.Status == models.ThreadResolved && t.ResolvedAt != nil {
		out.Resolution = &Resolution{By: Author{ID: deref(t.ResolvedBy), Name: deref(t.ResolvedByName)}, Note: deref(t.ResolutionNote),
			At: wiretime.New(*t.ResolvedAt)}
	}
	return out
}

// NewComment serializes c.
func NewComment(c *models.Comment, baseURL string) Comment {
	return Comment{ID: c.ID, Author: Author{ID: c.AuthorID, Name: c.AuthorName, Kind: c.AuthorKind}, Body: c.Body,
		Images: All(c.Images, func(i *models.CommentImage) CommentImage {
			return CommentImage{SHA256: i.SHA256, ContentType: i.ContentType, Size: i.Size, URL: CommentImageURL(baseURL, i.ReportID, i.SHA256)}
		}),
		CreatedAt: wiretime.New(c.CreatedAt)}
}

// CommentEvent is comment.created's data: the new comment, the thread it
// is in (without its other comments) and the report.
type CommentEvent struct {
	Report  ReportRef `json:"report"`
	Thread  Thread    `json:"thread"`
	Comment Comment   `json:"comment"`
}

// ReportRef names a report in an event about something on it.
type ReportRef struct {
	ID    string `json:"id"`
	Slug  string `json:"slug"`
	Title string `json:"title"`
}

// NewCommentEvent serializes a new comment c in thread t of r.
func NewCommentEvent(r *models.Report, t *models.CommentThread, c *models.Comment, baseURL string) CommentEvent {
	bare := *t
	bare.Comments = nil
	return CommentEvent{Report: ReportRef{ID: r.ID, Slug: r.Slug, Title: r.Title}, Thread: NewThread(&bare, baseURL), Comment: NewComment(c, baseURL)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
