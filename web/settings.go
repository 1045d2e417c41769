package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/internal/apperr"
)

// The person's settings page: their delegation while away (who stands in
// for them, from when until when) and the delegations that name them. A
// delegation is a member's: a guest sees the page without the form.

type settingsPage struct {
	adminBase
	// Member is whether the person may delegate.
	Member bool
	Mine   *delegations.Delegation
	ToMe   []delegations.Delegation
	Form   delegationForm
}

// delegationForm is what was typed, kept when it is refused; times are as
// the datetime-local fields send them, in UTC.
type delegationForm struct{ To, From, Until, Note string }

var delegationLabels = labels{"to": "Who stands in for you", "from": "From", "until": "Until", "note": "Note"}

func (p *Pages) settings(c *gin.Context) {
	p.showSettings(c, http.StatusOK, nil, nil)
}

func (p *Pages) showSettings(c *gin.Context, status int, prob *formProblem, form *delegationForm) {
	person := CurrentPerson(c)
	page := settingsPage{adminBase: base(c, "settings"), Member: person.Member != nil}
	if page.Member {
		var err error
		if page.Mine, page.ToMe, err = p.delegations.Mine(c.Request.Context(), person.Actor()); err != nil {
			p.Fail(c, err)
			return
		}
	}
	if m := page.Mine; m != nil && m.Delegate != nil {
		page.Form = delegationForm{To: m.Delegate.Email, From: m.From.UTC().Format(formTimeLayout),
			Until: m.Until.UTC().Format(formTimeLayout), Note: m.Note}
	}
	if form != nil {
		page.Form = *form
	}
	page.Problem = prob
	p.Render(c, status, "settings", page)
}

// setDelegation sets the person's delegation through the same call and
// checks as the API.
func (p *Pages) setDelegation(c *gin.Context) {
	form := delegationForm{To: c.PostForm("to"), From: c.PostForm("from"), Until: c.PostForm("until"), Note: c.PostForm("note")}
	in := delegations.SetInput{To: strings.TrimSpace(form.To), Note: form.Note}
	var err error
	if strings.TrimSpace(form.From) != "" {
		var from string
		if from, err = formTime("from", form.From); err == nil {
			in.From = &from
		}
	}
	if err == nil {
		in.Until, err = formTime("until", form.Until)
	}
	if err == nil {
		_, err = p.delegations.Set(c.Request.Context(), CurrentPerson(c).Actor(), in)
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, delegationLabels); ok {
			p.showSettings(c, status, prob, &form)
		}
		return
	}
	done(c, "/settings", "delegation-set")
}

func (p *Pages) endDelegation(c *gin.Context) {
	if err := p.delegations.End(c.Request.Context(), CurrentPerson(c).Actor()); err != nil {
		if prob, status, ok := p.refusedBy(c, err, delegationLabels); ok {
			p.showSettings(c, status, prob, nil)
		}
		return
	}
	done(c, "/settings", "delegation-ended")
}

// formTimeLayout is how a datetime-local field sends a time.
const formTimeLayout = "2006-01-02T15:04"

// formTime reads a datetime-local field's time, in UTC (with or without
// seconds), or an RFC 3339 time, as RFC 3339 for the services.
func formTime(field, s string) (string, error) {
	t, err := parseFormTime(field, s)
	if err != nil {
		return "", err
	}
	return t.Format(time.RFC3339), nil
}

// parseFormTime reads a datetime-local field's time as formTime does.
func parseFormTime(field, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{formTimeLayout, formTimeLayout + ":05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, apperr.Field(apperr.InvalidRequest, field, "%s must be a date and time in UTC, such as 2026-01-02T15:04", field)
}
