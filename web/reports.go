package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/wire"
)

// The reading pages: the reports shared with me, a report's page (its live
// version framed from its own origin, versions, audience, sharing), and
// the way in to a report's origin.

// readableLimit bounds the reports list; a person reads far fewer.
const readableLimit = 200

// reading answers 503 where reports cannot be read (no reports domain).
func (p *Pages) reading(c *gin.Context) {
	if p.site == nil {
		p.Fail(c, apperr.New(apperr.Unavailable, "Reports cannot be read on this server: it has no reports domain (ASSENT_REPORTS_DOMAIN)."))
		return
	}
	c.Next()
}

type reportsPage struct {
	Reports []reports.Report
}

func (p *Pages) reportsList(c *gin.Context) {
	rows, err := p.reports.ReadableList(c.Request.Context(), currentActor(c), readableLimit)
	if err != nil {
		p.Fail(c, err)
		return
	}
	p.Render(c, http.StatusOK, "reports", reportsPage{Reports: rows})
}

// reportPage is a report as its reader sees it in the app.
type reportPage struct {
	Report   *reports.Report
	Frame    string
	Versions []reports.Version
	Grants   []reports.Grant
	// Manage shows the share and rollback forms: the owner and the
	// organisation's owners and administrators manage a report.
	Manage bool
	// Readable is false for an administrator the report is not shared
	// with: the page then manages it without showing it.
	Readable bool
	// ShowAudience is false for guests: who else reads a report is the
	// organisation's to know.
	ShowAudience bool
	// Analytics are the report's readership, shown to those who manage
	// it; Chart draws its series on the plans that have one.
	Analytics *wire.ReportAnalytics
	Chart     *viewsChart
	// Threads are the report's comment threads, for its readers;
	// ReportOrigin is the framed report's origin.
	Threads      *ThreadsView
	ReportOrigin string
	Message      string
	// Problem is why the last change was refused; Audience what was typed
	// into the share form, kept when it was.
	Problem, ProblemField, Audience string
	Address                         string
}

// report shows a report's page; posts to the same address share, unshare,
// roll back or change whether analytics name readers (for those who
// manage it).
func (p *Pages) report(c *gin.Context) {
	person := CurrentPerson(c)
	r, page, ok := p.reportPageOf(c, strings.TrimPrefix(c.Param("slug"), "/"))
	if !ok {
		return
	}
	var err error
	status := http.StatusOK
	if c.Request.Method == http.MethodPost {
		if !page.Manage {
			p.Fail(c, apperr.New(apperr.Forbidden, "Only the report's owner or an administrator can change its sharing or versions."))
			return
		}
		if status, err = p.manageReport(c, r, person, page); err != nil {
			p.Fail(c, err)
			return
		}
	}
	p.showReport(c, status, r, page)
}

// reportPageOf reads report ref (its slug or id) for the signed-in person,
// and the page that shows it to them; false once the page has answered
// (not found, archived, or not theirs to read).
func (p *Pages) reportPageOf(c *gin.Context, ref string) (*reports.Report, *reportPage, bool) {
	person := CurrentPerson(c)
	r, err := p.reports.Get(c.Request.Context(), person.Organization.ID, ref)
	if apperr.Is(err, apperr.NotFound) && c.Request.Method == http.MethodGet && p.openPublic(c, ref) {
		return nil, nil, false // another organisation's public report
	}
	if err != nil {
		p.Fail(c, err)
		return nil, nil, false
	}
	readable, err := p.reports.MayRead(c.Request.Context(), r, person)
	if err != nil {
		p.Fail(c, err)
		return nil, nil, false
	}
	manage := person.Member != nil && reports.Manages(r, person.Actor())
	// Those who manage a report reach its page to share it even when it
	// is not shared with them; they still read it only by a grant.
	if !(manage && !r.Archived) && !p.mayOpen(c, r, readable) {
		return nil, nil, false
	}
	return r, &reportPage{Report: r, Manage: manage, Readable: readable, Address: paths.Report(r.Slug), ShowAudience: person.Member != nil}, true
}

// showReport renders r's page; fill, if any, adds what a refused form
// brings back once the page is read.
func (p *Pages) showReport(c *gin.Context, status int, r *reports.Report, page *reportPage, fill ...func(*reportPage)) {
	ctx := c.Request.Context()
	var err error
	if r, page.Versions, err = p.reports.Versions(ctx, currentActor(c), r.ID); err != nil {
		p.Fail(c, err)
		return
	}
	page.Report = r
	if page.Grants, err = p.reports.Grants(ctx, r.ID); err != nil {
		p.Fail(c, err)
		return
	}
	if page.Manage {
		person := CurrentPerson(c)
		if page.Analytics, err = p.reports.Analytics(ctx, person.Actor(), r.ID); err != nil {
			p.Fail(c, err)
			return
		}
		if page.Analytics.Readership != nil {
			page.Chart = newViewsChart(page.Analytics.Series)
		}
	}
	if r.LiveVersion != nil && page.Readable {
		if page.Frame, err = p.enterReport(c, r, "/"); err != nil {
			p.Fail(c, err)
			return
		}
		page.ReportOrigin = p.site.Origin(r.Key)
	}
	if page.Readable {
		if page.Threads, err = p.CommentThreads(c, r, "", true); err != nil {
			p.Fail(c, err)
			return
		}
	}
	for _, f := range fill {
		f(page)
	}
	p.framesReports(c, ownScripts)
	p.Render(c, status, "report", page)
}

// enterReport is the address that signs the person in on r's origin and
// opens next there: a single-use ticket for that origin alone, issued
// here, so the app's cookie never goes there. A page frames it, or
// /read/{key} redirects to it.
func (p *Pages) enterReport(c *gin.Context, r *reports.Report, next string) (string, error) {
	ticket, err := p.reports.ReaderTicket(c.Request.Context(), r, currentSession(c).ID)
	if err != nil {
		return "", err
	}
	return p.site.EnterURL(r.Key, ticket, next), nil
}

// ownScripts lets the review and report pages run their script, which
// puts what the reader selects in the framed report into the comment
// form's quote.
const ownScripts = "script-src 'self'"

// ReportFrame is how a page frames a version of a report from the
// report's own origin: Frame opens it there (Origin), signed in with a
// single-use ticket; NotShown says why it is not framed.
type ReportFrame struct {
	Frame, Origin, NotShown string
}

// FrameReport frames next (a version's path) of r for person, signed in
// on r's origin as the report's page does, when they may read it; the
// page may then run its own script, which quotes from the frame.
func (p *Pages) FrameReport(c *gin.Context, r *reports.Report, next string, person *accounts.Person) (ReportFrame, error) {
	if p.site == nil {
		c.Header("Content-Security-Policy", pagePolicy(ownScripts))
		return ReportFrame{NotShown: "Reports cannot be read on this server: it has no reports domain (ASSENT_REPORTS_DOMAIN)."}, nil
	}
	p.framesReports(c, ownScripts)
	readable, err := p.reports.MayRead(c.Request.Context(), r, person)
	switch {
	case err != nil:
		return ReportFrame{}, err
	case r.Archived:
		return ReportFrame{NotShown: "The report was archived, so it is no longer shown."}, nil
	case !readable:
		return ReportFrame{NotShown: "The report is not shared with you, so it is not shown here."}, nil
	}
	frame, err := p.enterReport(c, r, next)
	return ReportFrame{Frame: frame, Origin: p.site.Origin(r.Key)}, err
}

// framesReports lets a page frame reports' origins, and only those, with
// the page's extra directives.
func (p *Pages) framesReports(c *gin.Context, extra ...string) {
	c.Header("Content-Security-Policy", pagePolicy(append([]string{"frame-src " + p.site.FrameSource()}, extra...)...))
}

// manageReport carries out a post of the report's page through the same
// service calls as the API.
func (p *Pages) manageReport(c *gin.Context, r *reports.Report, person *accounts.Person, page *reportPage) (int, error) {
	ctx := c.Request.Context()
	by := person.Actor()
	audience := splitAudience(c.PostForm("audience"))
	var err error
	switch c.PostForm("action") {
	case "share":
		if _, err = p.reports.Share(ctx, r.OrganizationID, by, r.ID, &reports.AudienceInput{Audience: audience}); err == nil {
			page.Message = "Shared with " + strings.Join(audience, ", ") + "."
		}
	case "unshare":
		if _, err = p.reports.Unshare(ctx, r.OrganizationID, by, r.ID, &reports.AudienceInput{Audience: audience}); err == nil {
			page.Message = "No longer shared with " + strings.Join(audience, ", ") + "."
		}
	case "viewers":
		show := c.PostForm("showViewers") == "true"
		if _, _, err = p.reports.UpdateSettings(ctx, r.OrganizationID, by, r.ID, &reports.SettingsInput{ShowViewers: &show}); err == nil {
			page.Message = "Readership analytics no longer name this report's readers."
			if show {
				page.Message = "Readership analytics name this report's readers."
			}
		}
	case "rollback":
		n, convErr := strconv.Atoi(c.PostForm("version"))
		if convErr != nil {
			return 0, apperr.Field(apperr.InvalidRequest, "version", "choose a version")
		}
		if _, _, err = p.reports.Rollback(ctx, r.OrganizationID, by, r.ID, &reports.RollbackInput{Version: &n}); err == nil {
			page.Message = "Version " + strconv.Itoa(n) + " is live."
		}
	default:
		return 0, apperr.New(apperr.InvalidRequest, "unknown action")
	}
	if e, ok := apperr.As(err); ok && e.Status() < 500 {
		page.Problem, page.ProblemField = PersonMessage(e, sharingLabels), e.Field
		if c.PostForm("action") == "share" || c.PostForm("action") == "unshare" {
			page.Audience = c.PostForm("audience")
		}
		if len(e.Candidates) > 0 {
			page.Problem += " Did you mean: " + strings.Join(e.Candidates, "; ") + "?"
		}
		return e.Status(), nil
	}
	return http.StatusOK, err
}

// AudienceInvalid reports whether the refusal is about the share form's
// audience or one of its entries.
func (r reportPage) AudienceInvalid() bool { return strings.HasPrefix(r.ProblemField, "audience") }

// sharingLabels name the report page's form fields.
var sharingLabels = Labels{"audience": "Share with", "version": "Version", "showViewers": "Name readers in these analytics"}

// splitAudience reads the share form's field: phrases on lines or
// separated by commas.
func splitAudience(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ';' }) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// publicReport sends a visitor not signed in from a public report's
// address (its url) to the report's own origin, where the public reads it
// without signing in, each page a view counted as anonymous; no cookie is
// set. Any other visitor goes on to sign in.
func (p *Pages) publicReport(c *gin.Context) {
	if CurrentPerson(c) != nil || p.site == nil || !p.openPublic(c, strings.TrimPrefix(c.Param("slug"), "/")) {
		c.Next()
	}
}

// openPublic redirects to the origin of the public report at slug and
// reports whether there is one.
func (p *Pages) openPublic(c *gin.Context, slug string) bool {
	r, err := p.reports.PublicBySlug(c.Request.Context(), slug)
	if err != nil {
		return false
	}
	c.Redirect(http.StatusSeeOther, p.site.Origin(r.Key)+"/")
	c.Abort()
	return true
}

// mayOpen answers an archived report (410) or one the person may not read
// (403, with a request for access); it reports whether the page goes on.
func (p *Pages) mayOpen(c *gin.Context, r *reports.Report, readable bool) bool {
	switch {
	case r.Archived:
		p.Render(c, http.StatusGone, "error", Problem{Title: "This report was archived",
			Message: "Its owner archived " + r.Title + "; it is no longer served.", Retry: "/reports", RetryLabel: "Your reports"})
	case !readable:
		p.Render(c, http.StatusForbidden, "report_denied", r)
	default:
		return true
	}
	c.Abort()
	return false
}

// reportByKey is the report of the person's organisation whose host is
// named with key; another organisation's is not found.
func (p *Pages) reportByKey(c *gin.Context, person *accounts.Person) (*reports.Report, bool) {
	r, err := p.reports.ByKey(c.Request.Context(), person.Actor(), c.Param("key"))
	if err != nil {
		p.Fail(c, err)
		return nil, false
	}
	return r, true
}

// openReport lets a signed-in person into a report's origin: their grant
// is checked, then a single-use ticket for that host alone takes them to
// the page they asked for there.
func (p *Pages) openReport(c *gin.Context) {
	person := CurrentPerson(c)
	r, ok := p.reportByKey(c, person)
	if !ok {
		return
	}
	readable, err := p.reports.MayRead(c.Request.Context(), r, person)
	if err != nil {
		p.Fail(c, err)
		return
	}
	if !p.mayOpen(c, r, readable) {
		return
	}
	next := c.Query("next")
	if !paths.Local(next) {
		next = "/"
	}
	enter, err := p.enterReport(c, r, next)
	if err != nil {
		p.Fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, enter)
}

// requestAccess tells the report's owner that the person asks to read it:
// access.requested to the organisation's webhooks and an email to the
// owner (or, for a report an agent owns, the administrators). Asking again
// within a day sends nothing more.
func (p *Pages) requestAccess(c *gin.Context) {
	person := CurrentPerson(c)
	ctx := c.Request.Context()
	r, ok := p.reportByKey(c, person)
	if !ok {
		return
	}
	fresh, err := p.reports.RequestAccess(ctx, r, person.Actor())
	if err != nil {
		p.Fail(c, err)
		return
	}
	if fresh {
		p.emailAccessRequest(ctx, r, person)
	}
	p.Render(c, http.StatusOK, "error", Problem{Title: "Access requested",
		Message: "The owner of " + r.Title + " has been told you asked to read it. You will be able to open it once they share it with you.",
		Retry:   "/reports", RetryLabel: "Your reports"})
}

// emailAccessRequest emails whoever can share r, after the response.
func (p *Pages) emailAccessRequest(ctx context.Context, r *reports.Report, person *accounts.Person) {
	to, err := p.reports.Sharers(ctx, r)
	if err != nil {
		p.log.ErrorContext(ctx, "access request: administrators not found", "report", r.ID, "error", err)
		return
	}
	if len(to) == 0 {
		return
	}
	link := p.baseURL + paths.Report(r.Slug)
	who := person.DisplayName() + " <" + person.Email() + ">"
	p.sending.Add(1)
	go func() {
		defer p.sending.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
		defer cancel()
		// One email each: nobody learns who else was told.
		for _, addr := range to {
			msg := mail.Message{To: []string{addr}, Subject: person.DisplayName() + " asks to read " + r.Title,
				Text: who + " asks to read the report \"" + r.Title + "\".\n\nShare it with them from its page: " + link + "\n"}
			if err := p.mailer.Send(ctx, msg); err != nil {
				p.log.ErrorContext(ctx, "access request email not sent", "report", r.ID, "to", addr, "error", err)
			}
		}
	}()
}
