package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/pushtest"
)

var (
	csrfInput  = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	tokenInput = regexp.MustCompile(`name="token" value="([^"]+)"`)
	pushKey    = regexp.MustCompile(`data-key="([^"]+)"`)
)

// pageClient is a person's browser without JavaScript: it keeps cookies
// and does not follow redirects.
type pageClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (p *pageClient) do(method, path string, form url.Values) (int, string) {
	p.t.Helper()
	target := path
	if !strings.HasPrefix(path, "http") {
		target = p.base + path
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(p.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := p.c.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	return resp.StatusCode, string(b)
}

func match(t *testing.T, re *regexp.Regexp, body string) string {
	t.Helper()
	m := re.FindStringSubmatch(body)
	require.NotNil(t, m, "%s not in:\n%s", re, body)
	return html.UnescapeString(m[1])
}

// TestDevPushesToASubscribedBrowser is issue 22's push "done when" on
// `assent dev`, with a local push service admitted: a member signs in,
// subscribes a browser as the inbox's script does, an agent asks them for
// an approval, and the push service receives a push signed with the VAPID
// key the inbox served, which opens with the browser's keys to the
// request's title.
func TestDevPushesToASubscribedBrowser(t *testing.T) {
	t.Setenv("ASSENT_DEV_ALLOW_LOOPBACK", "1")
	svc := pushtest.New(t)
	apiURL, boot, admin, stop := startDemo(t)
	defer stop()

	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	p := &pageClient{t: t, base: apiURL, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, form := p.do("GET", "/signin", nil)
	status, _ := p.do("POST", "/signin", url.Values{"csrf": {match(t, csrfInput, form)}, "email": {admin.Email}})
	require.Equal(t, http.StatusOK, status)
	_, confirm := p.do("GET", devMail(t, apiURL, admin.Email, "Sign in to Assent").Links[0], nil)
	status, _ = p.do("POST", "/signin/link", url.Values{"csrf": {match(t, csrfInput, confirm)}, "token": {match(t, tokenInput, confirm)}})
	require.Equal(t, http.StatusSeeOther, status)
	status, inbox := p.do("GET", "/inbox", nil)
	require.Equal(t, http.StatusOK, status)
	vapid, csrf := match(t, pushKey, inbox), match(t, csrfInput, inbox)

	phone := svc.Subscribe(t)
	status, body := p.do("POST", "/push/subscriptions", url.Values{"csrf": {csrf}, "endpoint": {phone.Endpoint},
		"p256dh": {phone.P256dh}, "auth": {phone.Auth}})
	require.Equal(t, http.StatusNoContent, status, body)

	var created map[string]any
	require.Equal(t, 201, postJSON(t, apiURL+"/api/v1/approvals", boot.AgentKey, fmt.Sprintf(`{"title":"Refund order 42",
		"description":"Card ending 4242.","risk":"medium","approvers":[%q],"input":{"amount":120}}`, admin.Email), &created))
	require.Eventually(t, func() bool { return len(svc.To(phone)) > 0 }, 20*time.Second, 100*time.Millisecond, "no push arrived")
	pushes := svc.To(phone)
	require.Len(t, pushes, 1)
	claims, err := pushtest.VerifyVAPID(pushes[0].Header, vapid, svc.URL, time.Now())
	require.NoError(t, err)
	assert.Equal(t, "mailto:assent@localhost", claims.Sub, "dev has neither an https address nor a sender address")
	plain, err := phone.Decrypt(pushes[0].Body)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(plain, &got))
	assert.Equal(t, map[string]any{"title": "Refund order 42", "kind": "approval", "risk": "medium", "url": created["url"]}, got)
}
