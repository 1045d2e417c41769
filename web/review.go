package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/states"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/reviews"
)

// reviewPage is a review's page: the pinned version framed from the
// report's origin, the verdicts so far and, for a reviewer still to give
// one, the verdict form.
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
	Threads *threadsView
	Done    string
	// Problem is why the verdict was refused; ProblemField the field.
	Problem, ProblemField string
	Form                  typed
}

// Status is the review's status as a person reads it.
func (r reviewPage) Status() string { return strings.ReplaceAll(r.R.Status, "_", " ") }

// verdictDone are the messages shown after a verdict, by the verdict.
var verdictDone = map[string]string{
	states.Approved:         "You approved this version.",
	states.ChangesRequested: "You requested changes.",
}

func (p *Pages) review(c *gin.Context) {
	p.showReview(c, http.StatusOK, formProblem{}, typed{})
}

// showReview renders the review in the path for the signed-in person, with
// prob (a refused verdict) and what they typed.
func (p *Pages) showReview(c *gin.Context, status int, prob formProblem, form typed) {
	p.renderReview(c, c.Param("id"), status, func(page *reviewPage) {
		page.Problem, page.ProblemField, page.Form = prob.Message, prob.Field, form
	})
}

// renderReview renders review id for the signed-in person, after fill
// adds what a refused form brings back.
func (p *Pages) renderReview(c *gin.Context, id string, status int, fill func(*reviewPage)) {
	person := CurrentPerson(c)
	ctx := c.Request.Context()
	rev, err := p.reviews.View(ctx, person.Actor(), id)
	if err != nil {
		p.Fail(c, err)
		return
	}
	report, err := p.reports.Get(ctx, rev.OrganizationID, rev.ReportID)
	if err != nil {
		p.Fail(c, err)
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
	if err := p.frameVersion(c, &page, person); err != nil {
		p.Fail(c, err)
		return
	}
	if page.Threads, err = p.commentThreads(c, report, rev.ID, page.Open); err != nil {
		p.Fail(c, err)
		return
	}
	fill(&page)
	p.Render(c, status, "review", page)
}

// ownScripts lets the review and report pages run their script, which
// puts what the reader selects in the framed report into the comment
// form's quote.
const ownScripts = "script-src 'self'"

// frameVersion frames the review's pinned version for person, signed in
// on the report's origin as the report's page does, when they may read it.
func (p *Pages) frameVersion(c *gin.Context, page *reviewPage, person *accounts.Person) error {
	if p.site == nil {
		c.Header("Content-Security-Policy", pagePolicy(ownScripts))
		page.NotShown = "Reports cannot be read on this server: it has no reports domain (ASSENT_REPORTS_DOMAIN)."
		return nil
	}
	p.framesReports(c, ownScripts)
	readable, err := p.reports.MayRead(c.Request.Context(), page.Report, person)
	switch {
	case err != nil:
		return err
	case page.Report.Archived:
		page.NotShown = "The report was archived, so it is no longer shown."
	case !readable:
		page.NotShown = "The report is not shared with you, so it is not shown here."
	default:
		page.ReportOrigin = p.site.Origin(page.Report.Key)
		page.Frame, err = p.enterReport(c, page.Report, paths.ReportVersion(page.R.Version))
	}
	return err
}

// verdictLabels name the verdict form's fields.
var verdictLabels = Labels{"note": "Note", "verdict": "Verdict"}

// verdict handles the verdict form through the same code as the REST
// endpoint; each rendered form is its own Update (its submission id), as
// on the approval page.
func (p *Pages) verdict(c *gin.Context) {
	in := reviews.VerdictInput{Verdict: c.PostForm("verdict"), Note: FormText(c.PostForm("note"))}
	var rev *reviews.Review
	err := validate.Struct(&in)
	if err == nil {
		rev, err = p.reviews.Verdict(c.Request.Context(), currentActor(c), c.Param("id"), c.PostForm("submission"), in)
	}
	if err != nil {
		p.refused(c, err, typed{Note: in.Note}, verdictLabels, p.showReview)
		return
	}
	c.Redirect(http.StatusSeeOther, paths.Review(rev.ID)+"?done="+in.Verdict)
}
