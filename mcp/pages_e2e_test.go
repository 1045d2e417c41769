package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	assent "github.com/assent-hq/assent/sdk/go"
)

// webPerson is a demo person signed in on the pages as a browser is:
// cookies kept, redirects seen, each form posted with its CSRF token.
// Its methods return errors rather than failing, so a goroutine deciding
// while a tool waits can use them.
type webPerson struct {
	base string
	c    *http.Client
}

var (
	signedInMu sync.Mutex
	signedIn   = map[string]*webPerson{}

	csrfField   = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	tokenField  = regexp.MustCompile(`name="token" value="([^"]+)"`)
	submitField = regexp.MustCompile(`name="submission" value="([^"]+)"`)
	decideForm  = regexp.MustCompile(`<form method="post" action="([^"]+)" class="decision">`)
)

type mailMessage struct {
	ID      string
	To      []string
	Subject string
	Links   []string
}

// signIn signs email in through the pages once per test binary: the
// address posted on the sign-in page, then the link `assent dev` mailed
// to its dev mailbox followed and confirmed.
func (d *dev) signIn(email string) (*webPerson, error) {
	signedInMu.Lock()
	defer signedInMu.Unlock()
	if p := signedIn[email]; p != nil {
		return p, nil
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	p := &webPerson{base: d.BaseURL, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	seen := map[string]bool{}
	old, err := p.mail()
	if err != nil {
		return nil, err
	}
	for _, m := range old {
		seen[m.ID] = true
	}
	_, form, err := p.get("/signin")
	if err != nil {
		return nil, err
	}
	if _, _, err := p.post("/signin", url.Values{"csrf": {field(csrfField, form)}, "email": {email}}, http.StatusOK); err != nil {
		return nil, err
	}
	var link string
	for deadline := time.Now().Add(15 * time.Second); link == "" && time.Now().Before(deadline); {
		msgs, err := p.mail()
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if !seen[m.ID] && len(m.To) == 1 && m.To[0] == email && strings.HasPrefix(m.Subject, "Sign in to Assent") && len(m.Links) > 0 {
				link = m.Links[0]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if link == "" {
		return nil, errors.New("no sign-in email to " + email + " in the dev mailbox")
	}
	_, confirm, err := p.get(link)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.post("/signin/link", url.Values{"csrf": {field(csrfField, confirm)}, "token": {field(tokenField, confirm)}},
		http.StatusSeeOther); err != nil {
		return nil, err
	}
	signedIn[email] = p
	return p, nil
}

func field(re *regexp.Regexp, body string) string {
	if m := re.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

func (p *webPerson) mail() ([]mailMessage, error) {
	resp, err := p.c.Get(p.base + "/dev/mail.json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var msgs []mailMessage
	return msgs, json.NewDecoder(resp.Body).Decode(&msgs)
}

// get reads a page (path, or an absolute address), wanting 200.
func (p *webPerson) get(path string) (int, string, error) {
	if !strings.HasPrefix(path, "http") {
		path = p.base + path
	}
	resp, err := p.c.Get(path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d\n%s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, string(b), err
}

// post posts a form as the page does, wanting status.
func (p *webPerson) post(path string, form url.Values, status int) (string, string, error) {
	resp, err := p.c.PostForm(p.base+path, form)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != status {
		err = fmt.Errorf("POST %s: %d, want %d\n%s", path, resp.StatusCode, status, b)
		if resp.StatusCode == http.StatusServiceUnavailable {
			err = &unavailable{err}
		}
	}
	return resp.Header.Get("Location"), string(b), err
}

// untilAvailable runs act, a page's form read and posted, again while it
// is answered 503 (the request is listed before its workflow has started,
// a moment under load), as the page asks a person to, for up to 30 s.
func untilAvailable(act func() error) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		err := act()
		var busy *unavailable
		if !errors.As(err, &busy) || time.Now().After(deadline) {
			return err
		}
	}
}

// decide opens the approval's page and posts its decision form with the
// corrected fields (field.<name>) and note.
func (p *webPerson) decide(id, decision string, corrections map[string]string, note string) error {
	return untilAvailable(func() error { return p.decideOnce(id, decision, corrections, note) })
}

// unavailable is a 503 from a page (post): try again shortly.
type unavailable struct{ err error }

func (u *unavailable) Error() string { return u.err.Error() }

func (p *webPerson) decideOnce(id, decision string, corrections map[string]string, note string) error {
	_, page, err := p.get("/approvals/" + id)
	if err != nil {
		return err
	}
	action := field(decideForm, page)
	if action == "" {
		return errors.New("no decision form on the approval's page:\n" + page)
	}
	form := url.Values{"csrf": {field(csrfField, page)}, "decision": {decision}, "note": {note}}
	if s := field(submitField, page); s != "" {
		form.Set("submission", s)
	}
	for k, v := range corrections {
		form.Set("field."+k, v)
	}
	_, _, err = p.post(action, form, http.StatusSeeOther)
	return err
}

// reply opens the request for information's page and submits answers
// (question id to the values its inputs post).
func (p *webPerson) reply(id string, answers map[string][]string) error {
	return untilAvailable(func() error {
		_, page, err := p.get("/collections/" + id)
		if err != nil {
			return err
		}
		form := url.Values{"csrf": {field(csrfField, page)}, "submission": {field(submitField, page)}, "action": {"submit"}}
		for k, v := range answers {
			form["answer."+k] = v
		}
		_, _, err = p.post("/collections/"+id+"/replies", form, http.StatusSeeOther)
		return err
	})
}

// eventually polls find until it returns an id, for up to 30 seconds.
func eventually(what string, find func() (string, error)) (string, error) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		id, err := find()
		if err != nil || id != "" {
			return id, err
		}
	}
	return "", errors.New("no " + what)
}

// pendingApproval finds the pending approval titled title.
func pendingApproval(c *assent.Client, title string) (string, error) {
	return eventually("pending approval "+title, func() (string, error) {
		for a, err := range c.Approvals.List(context.Background(), &assent.ListApprovalsParams{Status: "pending", Limit: 50}) {
			if err != nil {
				return "", err
			}
			if a.Title == title {
				return a.ID, nil
			}
		}
		return "", nil
	})
}

// openCollection finds the open request for information titled title.
func openCollection(c *assent.Client, title string) (string, error) {
	return eventually("open collection "+title, func() (string, error) {
		for x, err := range c.Collections.List(context.Background(), &assent.ListCollectionsParams{Status: "open", Limit: 50}) {
			if err != nil {
				return "", err
			}
			if x.Title == title {
				return x.ID, nil
			}
		}
		return "", nil
	})
}

// openReview finds the open review titled title.
func openReview(c *assent.Client, title string) (string, error) {
	return eventually("open review "+title, func() (string, error) {
		for x, err := range c.Reviews.List(context.Background(), &assent.ListReviewsParams{Status: "open", Limit: 50}) {
			if err != nil {
				return "", err
			}
			if x.Title == title {
				return x.ID, nil
			}
		}
		return "", nil
	})
}
