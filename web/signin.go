package web

import (
	"bytes"
	"context"
	"errors"
	htmltemplate "html/template"
	"math"
	"net/http"
	netmail "net/mail"
	"net/url"
	"strconv"
	texttemplate "text/template"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/paths"
	"github.com/assent-hq/assent/internal/ratelimit"
)

// defaultNext is where signing in leads when no (safe) page was asked for.
const defaultNext = "/inbox"

// linkMinutes is how long a sign-in link works, as pages and emails say.
const linkMinutes = int(accounts.SignInLinkLifetime / time.Minute)

// sendTimeout bounds one sign-in email, which goes out after the response.
const sendTimeout = time.Minute

// safeNext returns next when it is a path on this site, else defaultNext,
// so a crafted sign-in link cannot send a person elsewhere.
func safeNext(next string) string {
	if !paths.Local(next) {
		return defaultNext
	}
	return next
}

func (p *Pages) home(c *gin.Context) {
	if CurrentPerson(c) != nil {
		c.Redirect(http.StatusFound, defaultNext)
		return
	}
	c.Redirect(http.StatusFound, "/signin")
}

type signInPage struct {
	Email     string
	Next      string
	Error     string
	SignedOut bool
	// OIDCLabel is the single sign-on button's text; empty hides it.
	OIDCLabel string
	// DemoPeople are the addresses `assent dev` made, each a link that
	// fills the form; nil outside dev.
	DemoPeople []string
}

func (p *Pages) signInForm(c *gin.Context) {
	next := safeNext(c.Query("next"))
	if CurrentPerson(c) != nil {
		c.Redirect(http.StatusFound, next)
		return
	}
	// ?email= fills the form, for the demo people's links.
	p.showSignIn(c, http.StatusOK, signInPage{Email: c.Query("email"), Next: next, SignedOut: c.Query("signedout") == "1"})
}

// showSignIn renders the sign-in form, with the single sign-on button
// when it is configured.
func (p *Pages) showSignIn(c *gin.Context, status int, page signInPage) {
	page.OIDCLabel = p.oidcLabel()
	if p.dev != nil {
		page.DemoPeople = p.dev.People
	}
	p.Render(c, status, "signin", page)
}

// Sign-in requests are limited per client address: each sends email, so
// an unlimited form would let anyone flood the members' mailboxes. A
// person signs in rarely (sessions last SessionLifetime), so the bucket
// is generous for an office behind one address.
const (
	signInBurst = 20
	signInEvery = 30 * time.Second
)

// sendSignInLink emails links to whoever has the address and answers the
// same whether anyone has it or not, so the form cannot tell who has an
// account. The email goes out after the response, so neither can timing.
func (p *Pages) sendSignInLink(c *gin.Context) {
	email := accounts.NormalizeEmail(c.PostForm("email"))
	next := safeNext(c.PostForm("next"))
	if ok, wait := p.signIns.Allow(ratelimit.ClientKey(c.ClientIP())); !ok {
		minutes := int(math.Ceil(wait.Minutes()))
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		p.showSignIn(c, http.StatusTooManyRequests, signInPage{Email: c.PostForm("email"), Next: next,
			Error: "Too many sign-in requests have come from your network. Try again in " + plural(minutes, "minute") + "."})
		return
	}
	if !validEmail(email) {
		p.showSignIn(c, http.StatusBadRequest, signInPage{Email: c.PostForm("email"), Next: next,
			Error: "Enter your email address, such as name@example.com."})
		return
	}
	p.mailLinks(c.Request.Context(), email, next)
	var mailbox string
	if p.dev != nil {
		mailbox = p.dev.Mailbox
	}
	p.Render(c, http.StatusOK, "signin_sent", struct {
		Email   string
		Minutes int
		// Mailbox is the dev mailbox's path; empty outside dev.
		Mailbox string
	}{email, linkMinutes, mailbox})
}

func validEmail(email string) bool {
	a, err := netmail.ParseAddress(email)
	return err == nil && a.Address == email && len(email) <= 320
}

// mailLinks makes and emails sign-in links for whoever has the address,
// after the response: the lookup, the writes and the send take the same
// time whether anyone has it or not, so timing tells nothing.
func (p *Pages) mailLinks(ctx context.Context, email, next string) {
	ctx = context.WithoutCancel(ctx)
	p.sending.Add(1)
	go func() {
		defer p.sending.Done()
		ctx, cancel := context.WithTimeout(ctx, sendTimeout)
		defer cancel()
		links, err := p.accounts.CreateSignInLinks(ctx, email)
		if err != nil || len(links) == 0 {
			if err != nil {
				p.log.ErrorContext(ctx, "sign-in links not made", "to", email, "error", err)
			}
			return
		}
		msg, err := p.signInMessage(email, next, links)
		if err != nil {
			p.log.ErrorContext(ctx, "sign-in email not built", "error", err)
			return
		}
		if err := p.mailer.Send(ctx, msg); err != nil {
			p.log.ErrorContext(ctx, "sign-in email not sent", "to", email, "error", err)
		}
	}()
}

// errNoMailer is what sign-in reports when the process has no way to send
// email; the person sees the usual answer, the operator sees this.
var errNoMailer = errors.New("email is not configured: set ASSENT_SMTP_HOST (and ASSENT_SMTP_FROM) so sign-in links can be sent")

type noMailer struct{}

func (noMailer) Send(context.Context, mail.Message) error { return errNoMailer }

type signInMail struct {
	Email   string
	Minutes int
	Links   []signInMailLink
}

type signInMailLink struct {
	Organization string
	Name         string
	Guest        bool
	URL          string
}

var (
	signInText = texttemplate.Must(texttemplate.ParseFS(files, "templates/mail/signin.txt"))
	signInHTML = htmltemplate.Must(htmltemplate.ParseFS(files, "templates/mail/signin.html"))
)

// signInMessage is one email with a link per organisation the address
// belongs to; each link signs in to the organisation it names.
func (p *Pages) signInMessage(email, next string, links []accounts.IssuedSignInLink) (mail.Message, error) {
	data := signInMail{Email: email, Minutes: linkMinutes}
	for _, l := range links {
		q := url.Values{"token": {l.Token}}
		if next != defaultNext {
			q.Set("next", next)
		}
		data.Links = append(data.Links, signInMailLink{Organization: l.Person.Organization.Name,
			Name: l.Person.DisplayName(), Guest: l.Person.Guest != nil, URL: p.baseURL + "/signin/link?" + q.Encode()})
	}
	var text, html bytes.Buffer
	if err := signInText.Execute(&text, data); err != nil {
		return mail.Message{}, err
	}
	if err := signInHTML.Execute(&html, data); err != nil {
		return mail.Message{}, err
	}
	return mail.Message{To: []string{email}, Subject: "Sign in to Assent", Text: text.String(), HTML: html.String()}, nil
}

type linkPage struct {
	Token  string
	Next   string
	Person *accounts.Person
}

// confirmSignIn shows whom a link signs in and asks for a click: mail
// scanners open links, and opening must not use up a single-use link.
func (p *Pages) confirmSignIn(c *gin.Context) {
	// The address holds the token; keep it out of any Referer.
	c.Header("Referrer-Policy", "no-referrer")
	token := c.Query("token")
	person, err := p.accounts.PeekSignInLink(c.Request.Context(), token)
	if err != nil {
		p.linkFailed(c, err)
		return
	}
	p.Render(c, http.StatusOK, "signin_link", linkPage{Token: token, Next: safeNext(c.Query("next")), Person: person})
}

// signIn uses the link up, starts a session in the organisation the link
// names, and goes on to the page asked for.
func (p *Pages) signIn(c *gin.Context) {
	person, err := p.accounts.ConsumeSignInLink(c.Request.Context(), c.PostForm("token"))
	if err != nil {
		p.linkFailed(c, err)
		return
	}
	p.startSession(c, person, safeNext(c.PostForm("next")))
}

func (p *Pages) linkFailed(c *gin.Context, err error) {
	e, ok := apperr.As(err)
	if !ok {
		p.InternalError(c, err)
		return
	}
	p.Render(c, e.Status(), "error", Problem{Title: "This sign-in link cannot be used", Message: PersonMessage(e, nil),
		Retry: "/signin", RetryLabel: "Email me a new link"})
}

func (p *Pages) signOut(c *gin.Context) {
	if s := currentSession(c); s != nil {
		if err := p.accounts.DeleteSession(c.Request.Context(), s.OrganizationID, s.ID); err != nil {
			p.Fail(c, err)
			return
		}
	}
	p.setCookie(c, SessionCookie, "", noExpiry)
	c.Redirect(http.StatusSeeOther, "/signin?signedout=1")
}
