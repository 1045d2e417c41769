// Package page is a review's page: the pinned version framed from the
// report's origin, the verdicts so far, the review's comment threads and,
// for a reviewer still to give one, the verdict form, rendered through the
// pages' kit (web.KindPage).
package page

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/web"
)

//go:embed review.html
var templates embed.FS

// Page is the page of the reviews of service, whose reports reports
// keeps.
type Page struct {
	service *reviews.Service
	reports *reports.Service
	pages   *web.Pages
}

// New is the page of service's reviews.
func New(service *reviews.Service, reports *reports.Service) *Page {
	return &Page{service: service, reports: reports}
}

// Templates holds the page's template.
func (*Page) Templates() fs.FS { return templates }

// Mount adds the page and its verdict form to g.
func (p *Page) Mount(g gin.IRouter, pages *web.Pages) {
	p.pages = pages
	g.GET(paths.ReviewPage, web.RequireSignIn, p.show)
	g.POST(paths.ReviewPage+"/verdict", web.RequireSignIn, p.verdict)
}

// reviewPage is what the template shows.
type reviewPage struct {
	R      *reviews.Review
	Report *reports.Report
	// Frame opens the pinned version on the report's origin, ReportOrigin
	// being that origin; NotShown says why there is no frame.
	Frame, ReportOrigin, NotShown string
	// Live is the report's live version when it is not the pinned one.
	Live int
	// Waiting are the reviewers yet to give a verdict.
	Waiting []string
	// Reviewer is whether the viewer was asked, Reviewed whether they gave
	// a verdict, Open whether verdicts are still taken.
	Reviewer, Reviewed, Open bool
	// Submission makes the verdict form's post one Update.
	Submission string
	// Threads are the review's comment threads.
	Threads *web.ThreadsView
	Done    string
	// Problem is why the verdict was refused; ProblemField the field.
	Problem, ProblemField string
	// Form is what the person typed into the verdict form.
	Form struct{ Note string }
}

// Status is the review's status as a person reads it.
func (r reviewPage) Status() string { return strings.ReplaceAll(r.R.Status, "_", " ") }

// verdictDone are the messages shown after a verdict, by the verdict.
var verdictDone = map[string]string{
	states.Approved:         "You approved this version.",
	states.ChangesRequested: "You requested changes.",
}

func (p *Page) show(c *gin.Context) {
	p.render(c, c.Param("id"), http.StatusOK, func(*reviewPage) {})
}

// ShowThreads renders review id again with status, after fill changes its
// threads: a comment refused on the page, and what was typed.
func (p *Page) ShowThreads(c *gin.Context, id string, status int, fill func(*web.ThreadsView)) {
	p.render(c, id, status, func(page *reviewPage) { fill(page.Threads) })
}

// render renders review id for the signed-in person, after fill adds what
// a refused form brings back.
func (p *Page) render(c *gin.Context, id string, status int, fill func(*reviewPage)) {
	person := web.CurrentPerson(c)
	ctx := c.Request.Context()
	rev, err := p.service.View(ctx, person.Actor(), id)
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	report, err := p.reports.Get(ctx, rev.OrganizationID, rev.ReportID)
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	page := reviewPage{R: rev, Report: report, Reviewer: slices.Contains(rev.ReviewerIDs, person.ID()), Reviewed: rev.Reviewed(person.ID()),
		Open: rev.Status == states.Open, Submission: ids.New("sub"), Done: verdictDone[c.Query("done")]}
	if report.LiveVersion != nil && *report.LiveVersion != rev.Version {
		page.Live = *report.LiveVersion
	}
	for _, who := range rev.Asked.V {
		if !rev.Reviewed(who.ID) {
			page.Waiting = append(page.Waiting, who.Name)
		}
	}
	frame, err := p.pages.FrameReport(c, report, paths.ReportVersion(rev.Version), person)
	if err != nil {
		p.pages.Fail(c, err)
		return
	}
	page.Frame, page.ReportOrigin, page.NotShown = frame.Frame, frame.Origin, frame.NotShown
	if page.Threads, err = p.pages.CommentThreads(c, report, rev.ID, page.Open); err != nil {
		p.pages.Fail(c, err)
		return
	}
	fill(&page)
	p.pages.Render(c, status, "review", page)
}

// verdictLabels name the verdict form's fields.
var verdictLabels = web.Labels{"note": "Note", "verdict": "Verdict"}

// verdict handles the verdict form through the same code as the REST
// endpoint; each rendered form is its own Update (its submission id), as
// on the approval page. A refused verdict shows the page again with why,
// keeping the note.
func (p *Page) verdict(c *gin.Context) {
	in := reviews.VerdictInput{Verdict: c.PostForm("verdict"), Note: web.FormText(c.PostForm("note"))}
	person := web.CurrentPerson(c)
	var rev *reviews.Review
	err := validate.Struct(&in)
	if err == nil {
		rev, err = p.service.Verdict(c.Request.Context(), person.Actor(), c.Param("id"), c.PostForm("submission"), in)
	}
	if err != nil {
		e, ok := apperr.As(err)
		if !ok {
			p.pages.InternalError(c, err)
			return
		}
		p.render(c, c.Param("id"), e.Status(), func(page *reviewPage) {
			page.Problem, page.ProblemField, page.Form.Note = web.PersonMessage(e, verdictLabels), e.Field, in.Note
		})
		return
	}
	c.Redirect(http.StatusSeeOther, paths.Review(rev.ID)+"?done="+in.Verdict)
}

// Inbox is the reviews' section of the inbox: each with the version under
// review, how many approved so far when it needs several, and when it
// closes.
func (p *Page) Inbox(ctx context.Context, who accounts.Actor, order requests.InboxOrder, soon time.Time, limit int) (web.InboxSection, error) {
	return web.InboxOf(ctx, p.service, who, order, soon, limit, "Reviews", func(r *reviews.Review) web.InboxRow {
		facts := []web.InboxFact{{Text: "Requested by " + r.RequestedBy}, {Text: fmt.Sprintf("version %d", r.Version)}}
		if r.RequiredApprovals > 1 {
			facts = append(facts, web.InboxFact{Text: fmt.Sprintf("%d of %d approvals", r.ApprovalsSoFar, r.RequiredApprovals)})
		}
		return web.InboxRow{Path: paths.Review(r.ID), Title: r.Title, Facts: append(facts, web.InboxFact{Text: "closes", At: &r.ExpiresAt})}
	})
}
