package page

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/rules"
	"github.com/assent-hq/assent/web"
)

// The pages an emailed decision link opens: a low- or medium-risk approval,
// decided without signing in, as the person the link was sent to. Restricted
// fields are hidden and cannot be corrected there; the link decides once.

func (p *Page) linkApproval(c *gin.Context) {
	p.showLink(c, http.StatusOK, formProblem{}, typed{})
}

// showLink renders the approval the link in the path opens.
func (p *Page) showLink(c *gin.Context, status int, prob formProblem, form typed) {
	opened, ended, ok := p.openLink(c)
	if !ok {
		return
	}
	a, person := opened.Approval, opened.Person
	page := approvalPage{A: a, Approver: ended == "" && slices.Contains(a.ApproverIDs, person.ID()),
		Action:     paths.DecisionLink(a.ID, c.Param("token")),
		Link:       &linkView{Person: person, Hidden: hiddenCount(a), Ended: ended},
		Submission: ids.New("sub"), Problem: prob.Message, ProblemField: prob.Field, Form: form}
	p.renderApproval(c, status, &page, person.ID(), a.RestrictedFields)
}

// decideByLink decides as the link's person, correcting only fields that
// are not restricted. Like the signed-in page, each rendered form is its
// own Update.
func (p *Page) decideByLink(c *gin.Context) {
	opened, ended, ok := p.openLink(c)
	if !ok {
		return
	}
	if ended != "" {
		p.showLink(c, http.StatusConflict, formProblem{Message: ended}, typed{})
		return
	}
	a := opened.Approval
	d, form, err := decisionForm(c, a, a.RestrictedFields)
	if err == nil {
		err = p.service.DecideByLink(c.Request.Context(), opened, c.PostForm("submission"), d)
	}
	if err != nil {
		p.refused(c, err, form, decisionLabels(a, a.RestrictedFields), p.showLink)
		return
	}
	c.Redirect(http.StatusSeeOther, paths.DecisionLink(a.ID, c.Param("token")))
}

// openLink opens the link in the path. A link that has ended (used, or
// expired with its request) still opens, read-only, with ended saying why.
// A link for a request that needs sign-in leads there; an unknown link is
// an error page. ok is false when a response was written.
func (p *Page) openLink(c *gin.Context) (opened *approvals.OpenedLink, ended string, ok bool) {
	// The address holds the token; keep it out of any Referer.
	c.Header("Referrer-Policy", "no-referrer")
	opened, ended, err := p.service.OpenLink(c.Request.Context(), c.Param("id"), c.Param("token"))
	switch {
	case errors.Is(err, approvals.ErrSignInNeeded):
		c.Redirect(http.StatusSeeOther, "/signin?next="+url.QueryEscape(paths.Approval(opened.Approval.ID)))
		return nil, "", false
	case err != nil:
		if e, isApp := apperr.As(err); isApp {
			p.pages.Render(c, e.Status(), "error", web.Problem{Title: "This link cannot be used", Message: web.PersonMessage(e, nil),
				Retry: "/signin", RetryLabel: "Sign in instead"})
			return nil, "", false
		}
		p.pages.InternalError(c, err)
		return nil, "", false
	}
	return opened, ended, true
}

// hiddenCount counts the restricted members a carries in its input and
// metadata, at every depth, for the page to say how many it leaves out.
func hiddenCount(a *approvals.Approval) int {
	_, input, _ := rules.Redact(a.Input, a.RestrictedFields)
	_, meta, _ := rules.Redact(a.Metadata, a.RestrictedFields)
	return input + meta
}
