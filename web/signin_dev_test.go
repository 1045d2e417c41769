package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

var (
	demoLink   = regexp.MustCompile(`<a href="(/signin\?email=[^"]+)">([^<]+)</a>`)
	emailValue = regexp.MustCompile(`name="email" type="email"[^>]*value="([^"]*)"`)
)

// In `assent dev` the sign-in page offers the demo people, each a link
// that fills the form, and "check your email" points at the dev mailbox.
func TestDevSignInOffersDemoPeopleAndTheMailbox(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{
			Dev: &web.DevSettings{Mailbox: "/dev/mail", People: []string{"ada@example.com", "bob@example.com"}}}, app.Deps{})
		b := s.browser(t)

		form := b.get("/signin?next=" + url.QueryEscape("/approvals/apr_1"))
		require.Equal(t, http.StatusOK, form.status)
		assert.Contains(t, form.body, "Demo people")
		links := demoLink.FindAllStringSubmatch(form.body, -1)
		require.Len(t, links, 2, form.body)
		assert.Equal(t, "ada@example.com", links[0][2])
		assert.Equal(t, "bob@example.com", links[1][2])

		filled := b.get(html.UnescapeString(links[0][1]))
		require.Equal(t, http.StatusOK, filled.status)
		m := emailValue.FindStringSubmatch(filled.body)
		require.NotNil(t, m, filled.body)
		assert.Equal(t, "ada@example.com", m[1], "the link fills in the address")
		assert.Contains(t, filled.body, `name="next" value="/approvals/apr_1"`, "and keeps the page asked for")

		sent := b.post("/signin", url.Values{"csrf": {filled.csrf(t)}, "email": {m[1]}})
		require.Equal(t, http.StatusOK, sent.status)
		assert.Contains(t, sent.body, `<a href="/dev/mail">dev mailbox</a>`)
		s.pages.Wait()
		assert.Len(t, s.mailbox.Messages(), 1)
	})
}

// Outside dev neither shows.
func TestSignInShowsNoDevHelpOutsideDev(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		form := b.get("/signin")
		require.Equal(t, http.StatusOK, form.status)
		assert.NotContains(t, form.body, "Demo people")
		assert.Empty(t, demoLink.FindAllString(form.body, -1))
		sent := b.post("/signin", url.Values{"csrf": {form.csrf(t)}, "email": {"ada@example.com"}})
		require.Equal(t, http.StatusOK, sent.status)
		assert.Contains(t, sent.body, "Check your email")
		assert.NotContains(t, sent.body, "/dev/mail")
		assert.NotContains(t, sent.body, "assent dev")
	})
}
