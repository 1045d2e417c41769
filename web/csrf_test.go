package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/web"
)

// plant sets a cookie in the browser as someone else could (a sibling
// subdomain, a network attacker on plain HTTP): Path=/, not Secure.
func (b *browser) plant(name, value string) {
	u, err := url.Parse(b.base)
	require.NoError(b.t, err)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// setCookie is the cookie the response set under name, or nil.
func (p page) setCookie(name string) *http.Cookie {
	for _, c := range p.resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestPreSessionCSRFTokenIsSigned(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		// attempt plants token as the double-submit cookie in a fresh
		// browser and posts the sign-in form with the same token.
		attempt := func(token string) page {
			t.Helper()
			b := s.browser(t)
			b.plant("assent_csrf", token)
			return b.post("/signin", url.Values{"csrf": {token}, "email": {"nobody@example.com"}})
		}

		r := attempt(models.NewToken())
		assert.Equal(t, http.StatusForbidden, r.status, "a value the planter chose")
		assert.Contains(t, r.body, "This form has expired")

		issued := s.browser(t).get("/signin").csrf(t)
		parts := strings.Split(issued, ".")
		require.Len(t, parts, 3, issued)
		expires, err := strconv.ParseInt(parts[1], 10, 64)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(12*time.Hour), time.Unix(expires, 0), time.Minute)
		later := parts[0] + "." + strconv.FormatInt(expires+86400, 10) + "." + parts[2]
		assert.Equal(t, http.StatusForbidden, attempt(later).status, "expiry moved, signature kept")
		flipped := []byte(parts[2])
		flipped[0] ^= 1
		assert.Equal(t, http.StatusForbidden, attempt(parts[0]+"."+parts[1]+"."+string(flipped)).status, "signature changed")
		other := newSite(t, db)
		assert.Equal(t, http.StatusForbidden, attempt(web.SignCSRF(other.pages, time.Now().Add(time.Hour))).status, "signed under another key")
		assert.Equal(t, http.StatusForbidden, attempt(web.SignCSRF(s.pages, time.Now().Add(-time.Second))).status, "expired")

		r = attempt(web.SignCSRF(s.pages, time.Now().Add(time.Hour)))
		assert.Equal(t, http.StatusOK, r.status, r.body)
		assert.Contains(t, r.body, "Check your email")
		s.pages.Wait()
	})
}

func TestPreSessionCSRFTokenIsRenewedPastHalfItsLife(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		b := s.browser(t)
		fresh := web.SignCSRF(s.pages, time.Now().Add(11*time.Hour))
		b.plant("assent_csrf", fresh)
		r := b.get("/signin")
		assert.Equal(t, fresh, r.csrf(t), "other open forms keep working")
		assert.Nil(t, r.setCookie("assent_csrf"))

		old := web.SignCSRF(s.pages, time.Now().Add(time.Hour))
		b.plant("assent_csrf", old)
		r = b.get("/signin")
		renewed := r.setCookie("assent_csrf")
		require.NotNil(t, renewed, "a form shown has at least half the lifetime left")
		assert.Equal(t, renewed.Value, r.csrf(t))
		assert.NotEqual(t, old, renewed.Value)
		assert.Equal(t, 12*60*60, renewed.MaxAge)
	})
}

func TestCookiesAreHostPrefixedOverHTTPS(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newTLSSite(t, db)
		require.True(t, strings.HasPrefix(s.url, "https://"), s.url)
		// hostCookie checks what the __Host- prefix demands of a cookie
		// the response set.
		hostCookie := func(r page, name string) *http.Cookie {
			t.Helper()
			for _, h := range r.resp.Header.Values("Set-Cookie") {
				assert.True(t, strings.HasPrefix(h, "__Host-"), h)
				assert.NotContains(t, strings.ToLower(h), "domain=", h)
			}
			assert.Nil(t, r.setCookie(name), "no unprefixed %s", name)
			c := r.setCookie("__Host-" + name)
			require.NotNil(t, c, "__Host-%s set", name)
			assert.True(t, c.Secure)
			assert.True(t, c.HttpOnly)
			assert.Equal(t, "/", c.Path)
			assert.Empty(t, c.Domain)
			return c
		}

		b := s.browser(t)
		form := b.get("/signin")
		require.Equal(t, http.StatusOK, form.status, form.body)
		assert.Equal(t, hostCookie(form, "assent_csrf").Value, form.csrf(t))
		r := b.post("/signin", url.Values{"csrf": {form.csrf(t)}, "email": {"ada@example.com"}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		s.pages.Wait()
		msgs := s.mailbox.Messages()
		require.Len(t, msgs, 1)
		confirm := b.get(msgs[0].Links[0])
		require.Equal(t, http.StatusOK, confirm.status, confirm.body)
		r = b.post("/signin/link", url.Values{"csrf": {confirm.csrf(t)}, "token": {hiddenToken.FindStringSubmatch(confirm.body)[1]}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		session := hostCookie(r, web.SessionCookie).Value
		inbox := b.get("/inbox")
		require.Equal(t, http.StatusOK, inbox.status, inbox.body)
		assert.Contains(t, inbox.body, "Ada Lovelace")

		// Cookies under the plain names are not read over HTTPS, so
		// planting them does nothing.
		planted := s.browser(t)
		planted.plant(web.SessionCookie, session)
		assert.Equal(t, http.StatusSeeOther, planted.get("/inbox").status)
		token := web.SignCSRF(s.pages, time.Now().Add(time.Hour))
		planted.plant("assent_csrf", token)
		form2 := url.Values{"csrf": {token}, "email": {"nobody@example.com"}}
		assert.Equal(t, http.StatusForbidden, planted.post("/signin", form2).status)
		planted.plant("__Host-assent_csrf", token)
		assert.Equal(t, http.StatusOK, planted.post("/signin", form2).status, "the same token under the name this site sets")

		r = b.post("/signout", url.Values{"csrf": {inbox.csrf(t)}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.True(t, hostCookie(r, web.SessionCookie).MaxAge < 0, "cleared under the same name")
		assert.Nil(t, b.cookie("__Host-"+web.SessionCookie))
		assert.Equal(t, http.StatusSeeOther, b.get("/inbox").status)
		s.pages.Wait()
	})
}
