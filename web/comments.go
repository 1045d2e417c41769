package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/reports"
)

// threadParts are the comment threads' templates, parsed with the pages
// in threadPages and with every kind's page (New).
const threadParts = "templates/thread_parts.html"

var threadPages = map[string]bool{"report": true}

// ThreadsView is what a page shows of a report's comment threads: the
// open ones, the resolved ones folded away, and the forms to comment,
// reply and resolve.
type ThreadsView struct {
	Open, Resolved []comments.Thread
	ReportID       string
	// ReviewID, when set, keeps the view to one review's threads and opens
	// new threads in it.
	ReviewID string
	// Resolvable are the threads the viewer may resolve.
	Resolvable map[string]bool
	// Comment shows the forms: the report can take comments.
	Comment bool
	// Problem is why a comment was refused, in a person's words; Typed is
	// what was typed into the form it came from.
	Problem string
	Typed   commentForm
}

// commentForm is what was typed into a comment form: a new thread's, or
// the reply form of Thread.
type commentForm struct {
	Body, Quote, Thread string
}

// commentLabels name the comment forms' fields.
var commentLabels = Labels{"body": "Comment", "quote": "Quoted passage", "images": "Images"}

// CommentThreads reads the threads of r a person sees on a page: a
// review's own, or all of the report's. It is nil where the person may not
// read the report.
func (p *Pages) CommentThreads(c *gin.Context, r *reports.Report, reviewID string, open bool) (*ThreadsView, error) {
	person := CurrentPerson(c)
	_, all, err := p.comments.Threads(c.Request.Context(), person.Actor(), r.ID)
	if apperr.Is(err, apperr.Forbidden) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	v := &ThreadsView{ReportID: r.ID, ReviewID: reviewID, Resolvable: map[string]bool{}, Comment: open && !r.Archived && r.LiveVersion != nil}
	manages := reports.Manages(r, person.Actor())
	for _, t := range all {
		if reviewID != "" && (t.ReviewID == nil || *t.ReviewID != reviewID) {
			continue
		}
		if t.Status == comments.ThreadOpen {
			v.Open = append(v.Open, t)
			v.Resolvable[t.ID] = manages || t.OpenedBy == person.ID()
		} else {
			v.Resolved = append(v.Resolved, t)
		}
	}
	return v, nil
}

// postComment opens a thread or replies, from a review's page or a
// report's, through the same service call as the API, and returns to the
// page the thread belongs to.
func (p *Pages) postComment(c *gin.Context) {
	in := comments.PostInput{Body: FormText(c.PostForm("body"))}
	for field, dst := range map[string]**string{"quote": &in.Quote, "thread": &in.ThreadID, "review": &in.ReviewID} {
		if v := c.PostForm(field); v != "" {
			*dst = &v
		}
	}
	person := CurrentPerson(c)
	t, err := p.comments.Post(c.Request.Context(), person.Actor(), c.PostForm("report"), &in)
	if err != nil {
		p.commentRefused(c, err, in)
		return
	}
	p.backToThread(c, t, "comment")
}

// commentRefused shows the page the comment was written on again, with
// why it was refused and what was typed: the review's (named by a new
// thread's review field or a reply form's onReview) or the report's.
func (p *Pages) commentRefused(c *gin.Context, err error, in comments.PostInput) {
	e, ok := apperr.As(err)
	if !ok {
		p.InternalError(c, err)
		return
	}
	// What the person may not reach is the error page, as elsewhere.
	if e.Code == apperr.NotFound || e.Code == apperr.Forbidden {
		p.Fail(c, err)
		return
	}
	form := commentForm{Body: in.Body, Quote: deref(in.Quote), Thread: deref(in.ThreadID)}
	l := commentLabels
	if form.Thread != "" {
		l = Labels{"body": "Reply"}
	}
	fill := func(t *ThreadsView) {
		if t != nil {
			t.Problem, t.Typed = PersonMessage(e, l), form
		}
	}
	review := deref(in.ReviewID)
	if review == "" {
		review = c.PostForm("onReview")
	}
	if review != "" && p.threadsPage != nil {
		p.threadsPage.ShowThreads(c, review, e.Status(), fill)
		return
	}
	r, page, ok := p.reportPageOf(c, c.PostForm("report"))
	if !ok {
		return
	}
	p.showReport(c, e.Status(), r, page, func(page *reportPage) { fill(page.Threads) })
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// resolveThread resolves a thread with the note given.
func (p *Pages) resolveThread(c *gin.Context) {
	t, err := p.comments.Resolve(c.Request.Context(), CurrentPerson(c).Actor(), c.Param("id"), &comments.ResolveInput{Note: FormText(c.PostForm("note"))})
	if err != nil {
		p.Fail(c, err)
		return
	}
	p.backToThread(c, t, "resolved")
}

// backToThread returns to the page t is shown on, at the thread.
func (p *Pages) backToThread(c *gin.Context, t *comments.Thread, done string) {
	to := ""
	if t.ReviewID != nil {
		to = paths.Review(*t.ReviewID)
	} else {
		r, err := p.reports.Get(c.Request.Context(), t.OrganizationID, t.ReportID)
		if err != nil {
			p.Fail(c, err)
			return
		}
		to = paths.Report(r.Slug)
	}
	c.Redirect(http.StatusSeeOther, to+"?done="+done+"#"+t.ID)
}

// commentImage serves an image attached to a comment to who may read the
// report, as the API does: its type was read from its bytes when stored.
func (p *Pages) commentImage(c *gin.Context) {
	img, b, err := p.comments.Image(c.Request.Context(), CurrentPerson(c).Actor(), c.Param("report"), c.Param("sha"))
	if err != nil {
		p.Fail(c, err)
		return
	}
	c.Header("Content-Security-Policy", "default-src 'none'; sandbox")
	c.Header("Cache-Control", "private, max-age=3600")
	c.Data(http.StatusOK, img.ContentType, b)
}
