package web

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/internal/apperr"
)

// The person's settings page: their delegation while away (who stands in
// for them, from when until when), the delegations that name them, and
// the API tokens they mint for themselves, listed with a Revoke button for
// each live one. Delegations and tokens are a member's: a guest sees the
// page without the forms.

type settingsPage struct {
	adminBase
	// Member is whether the person may delegate and mint tokens.
	Member bool
	Mine   *delegations.Delegation
	ToMe   []delegations.Delegation
	Form   delegationForm
	// Scopes are those the person may give a token of their own
	// (admin.OwnTokenScopes of a sign-in), offered as checkboxes.
	Scopes    []string
	TokenForm tokenForm
	// Minted is the token just minted, with its secret: set only on the
	// page that answers the mint, the one time the secret is shown.
	Minted *createdKey
	// Tokens are a page of the member's own tokens, revoked ones
	// included, newest first (admin.OwnTokens, as GET /api/v1/me/tokens).
	Tokens []admin.APIKey
	Pager  pager
}

// Summary words a token's scopes as the admin keys list does.
func (settingsPage) Summary(list []string) scopeSummary { return keysPage{}.Summary(list) }

// delegationForm is what was typed, kept when it is refused; times are as
// the datetime-local fields send them, in UTC.
type delegationForm struct{ To, From, Until, Note string }

var delegationLabels = Labels{"to": "Who stands in for you", "from": "From", "until": "Until", "note": "Note"}

// tokenForm is what was ticked in the mint form, kept when it is refused.
type tokenForm struct{ Scopes []string }

// Has reports whether the form had scope ticked.
func (f tokenForm) Has(scope string) bool { return slices.Contains(f.Scopes, scope) }

// tokenLabels name the mint form's fields as the page labels them.
var tokenLabels = Labels{"scopes": "Scopes"}

func (p *Pages) settings(c *gin.Context) {
	p.showSettings(c, http.StatusOK, nil, nil)
}

// showSettings renders the page with status; the problem is why the last
// action was refused, and edit (when set) puts back what the refused form
// held or the token just minted.
func (p *Pages) showSettings(c *gin.Context, status int, prob *formProblem, edit func(*settingsPage)) {
	person := CurrentPerson(c)
	page := settingsPage{adminBase: base(c, "settings"), Member: person.Member != nil}
	if page.Member {
		var err error
		if page.Mine, page.ToMe, err = p.delegations.Mine(c.Request.Context(), person.Actor()); err != nil {
			p.Fail(c, err)
			return
		}
		page.Scopes = admin.OwnTokenScopes(nil)
		var next string
		if page.Tokens, next, err = p.admin.OwnTokens(c.Request.Context(), orgOf(c), person.Actor(), adminPage(c)); err != nil {
			p.Fail(c, err)
			return
		}
		page.Pager = newPager(c, "/settings", next)
	}
	if m := page.Mine; m != nil && m.Delegate != nil {
		page.Form = delegationForm{To: m.Delegate.Email, From: m.From.UTC().Format(FormTimeLayout),
			Until: m.Until.UTC().Format(FormTimeLayout), Note: m.Note}
	}
	if edit != nil {
		edit(&page)
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
		if from, err = FormTime("from", form.From); err == nil {
			in.From = &from
		}
	}
	if err == nil {
		in.Until, err = FormTime("until", form.Until)
	}
	if err == nil {
		_, err = p.delegations.Set(c.Request.Context(), CurrentPerson(c).Actor(), in)
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, delegationLabels); ok {
			p.showSettings(c, status, prob, func(page *settingsPage) { page.Form = form })
		}
		return
	}
	Done(c, "/settings", "delegation-set")
}

func (p *Pages) endDelegation(c *gin.Context) {
	if err := p.delegations.End(c.Request.Context(), CurrentPerson(c).Actor()); err != nil {
		if prob, status, ok := p.refusedBy(c, err, delegationLabels); ok {
			p.showSettings(c, status, prob, nil)
		}
		return
	}
	Done(c, "/settings", "delegation-ended")
}

// errGuestHasNoTokens refuses a guest the token forms.
var errGuestHasNoTokens = apperr.New(apperr.Forbidden, "an API token acts as a member of the organisation: a guest has none")

// mintToken mints the signed-in member a token of their own through the
// call the API's POST /api/v1/me/tokens makes (admin.MintMemberToken: the
// same rule of which scopes they may give, audited as key.issued naming
// them), with the scopes ticked. A sign-in mints as a member token with
// every scope would: within admin.OwnTokenScopes(nil). Its answer is the
// only page that shows the secret; it is not stored and no later page can
// show it.
func (p *Pages) mintToken(c *gin.Context) {
	person := CurrentPerson(c)
	form := tokenForm{Scopes: c.PostFormArray("scopes")}
	var (
		k      *admin.APIKey
		secret string
		err    error
	)
	switch {
	case person.Member == nil:
		err = errGuestHasNoTokens
	case len(form.Scopes) == 0:
		// The API gives every scope it may when none is named; a form
		// left blank is more likely a slip, so it asks.
		err = apperr.Field(apperr.InvalidRequest, "scopes", "scopes: tick at least one")
	default:
		k, secret, err = p.admin.MintMemberToken(c.Request.Context(), orgOf(c), person.Actor(), nil, person.Member.ID,
			admin.NewMemberToken{Scopes: form.Scopes})
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, tokenLabels); ok {
			p.showSettings(c, status, prob, func(page *settingsPage) { page.TokenForm = form })
		}
		return
	}
	p.showSettings(c, http.StatusCreated, nil, func(page *settingsPage) { page.Minted = &createdKey{Key: k, Secret: secret} })
}

// revokeOwnToken revokes one of the signed-in member's own tokens through
// the call the API's DELETE /api/v1/me/tokens/{id} makes
// (admin.RevokeOwnToken: their own only, audited as key.revoked naming
// them); Confirm must be ticked. Another person's token, or any key that
// is not theirs, is not found.
func (p *Pages) revokeOwnToken(c *gin.Context) {
	person := CurrentPerson(c)
	var err error
	if person.Member == nil {
		err = errGuestHasNoTokens
	} else if err = confirmed(c, "token"); err == nil {
		_, err = p.admin.RevokeOwnToken(c.Request.Context(), orgOf(c), person.Actor(), c.Param("id"))
	}
	if err != nil {
		if prob, status, ok := p.refusedBy(c, err, tokenLabels); ok {
			p.showSettings(c, status, prob, nil)
		}
		return
	}
	Done(c, "/settings", "token-revoked")
}

// FormTimeLayout is how a datetime-local field sends a time.
const FormTimeLayout = "2006-01-02T15:04"

// FormTime reads a datetime-local field's time, in UTC (with or without
// seconds), or an RFC 3339 time, as RFC 3339 for the services.
func FormTime(field, s string) (string, error) {
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
	for _, layout := range []string{FormTimeLayout, FormTimeLayout + ":05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, apperr.Field(apperr.InvalidRequest, field, "%s must be a date and time in UTC, such as 2026-01-02T15:04", field)
}
