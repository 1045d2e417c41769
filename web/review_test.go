package web_test

import (
	"context"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/comments"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/reviews"
	"github.com/assent-hq/assent/worker"
)

// newReviewingSite is the reading site with Temporal, the worker and the
// reviews service behind the pages, so verdicts run the review's workflow.
func newReviewingSite(t *testing.T, db *gorm.DB) (*readingSite, *reviews.Service) {
	tc := temporalenv.Client(t)
	s := newReadingSite(t, db, func(d *app.Deps) { d.Temporal = tc })
	temporalenv.Run(t, tc, worker.Deps{Store: s.store, BaseURL: s.url, Mailer: s.mailbox})
	return s, s.services.Reviews
}

var frameSrc = regexp.MustCompile(`<iframe class="report" src="([^"]+)" data-report-origin="([^"]+)"`)

// TestReviewPage: a reviewer sees the pinned version framed from the
// report's origin after a newer one went live, and approves through the
// form; someone not asked sees no form and is refused; a guest reviewer
// sees the page, another organisation's member does not; a form without
// its CSRF token changes nothing.
func TestReviewPage(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, service := newReviewingSite(t, db)
		ctx := context.Background()
		members := map[string]*models.Member{}
		for _, m := range [][2]string{{"bob@example.com", "Bob Stone"}, {"cy@example.com", "Cy Young"}, {"dan@example.com", "Dan Brown"}} {
			var err error
			members[m[0]], err = s.store.CreateMember(ctx, s.org.ID, m[0], m[1], "")
			require.NoError(t, err)
		}
		_, _, err := s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		r := s.publish(t, "q3", []string{"bob@example.com", "cy@example.com", "dan@example.com", "gus@partner.example"},
			[]bundle.InlineFile{{Path: "index.html", Content: "<!doctype html><title>Q3</title><h1>Version one</h1>"}})
		agent := models.KeyActor(s.org, &models.APIKey{ID: "key_test", Name: "report agent"}, nil)
		two := 2
		rev, err := service.Create(ctx, agent, &reviews.CreateInput{Fields: requests.Fields{Title: "Check <Q3>"}, ReportID: "q3", Instructions: "Totals first.",
			Reviewers: []string{"bob@example.com", "cy@example.com", "gus@partner.example"}, RequiredApprovals: &two}, nil)
		require.NoError(t, err)
		next := "<!doctype html><h1>Version two</h1>"
		_, _, err = s.reports.Publish(ctx, models.KeyActor(s.org, &models.APIKey{}, s.ada), r.ID,
			&reports.VersionInput{Source: reports.Source{Content: &next}}, nil)
		require.NoError(t, err)
		address := "/reviews/" + rev.ID

		bob := s.reader(t, "bob@example.com")
		inbox := bob.get("/inbox")
		assert.Contains(t, inbox.body, `href="`+address+`"`, "the inbox lists the review")
		assert.Contains(t, inbox.body, "1 waiting on you")
		page := bob.get(address)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "Check &lt;Q3&gt;")
		assert.Contains(t, page.body, "Totals first.")
		assert.Contains(t, page.body, "A newer version is live (version 2)")
		assert.Contains(t, page.body, "0 of 2 required")
		assert.Contains(t, page.body, "report agent")
		m := frameSrc.FindStringSubmatch(page.body)
		require.NotNil(t, m, page.body)
		frame := html.UnescapeString(m[1])
		assert.Contains(t, frame, s.origin(r)+"/_assent/enter?")
		assert.Contains(t, frame, "next=%2F_assent%2Fv%2F1%2F", "the frame opens the pinned version")
		assert.Equal(t, s.origin(r), m[2])
		csp := page.header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "frame-src http://*."+s.domain)
		assert.Contains(t, csp, "script-src 'self'")
		assert.Contains(t, page.body, `<script src="/static/review.js" defer></script>`)
		assert.Contains(t, page.body, `<section id="threads"`)
		assert.Regexp(t, `(?s)<form id="comment-form" method="post" action="/comments".*name="csrf".*name="review" value="`+rev.ID+`".*<textarea id="quote" name="quote"`, page.body)
		framed, _ := bob.follow(frame)
		require.Equal(t, http.StatusOK, framed.status)
		assert.Contains(t, framed.body, "Version one", "the frame shows version 1, not the live version 2")
		script := bob.get("/static/review.js")
		assert.Equal(t, "text/javascript; charset=utf-8", script.header.Get("Content-Type"))
		assert.Contains(t, script.body, `event.origin !== origin`)
		assert.NotContains(t, bob.get("/history").header.Get("Content-Security-Policy"), "script-src", "other pages run no script (but the inbox, for push)")

		// A form without its token is refused and changes nothing; a
		// refused verdict shows on the page with what was typed.
		form := url.Values{"submission": {page.submission(t)}, "verdict": {"approved"}, "note": {"Reads well."}}
		forged := bob.post(address+"/verdict", form)
		assert.Equal(t, http.StatusForbidden, forged.status)
		assert.Contains(t, forged.body, "This form has expired")
		got, err := service.Get(ctx, s.org.ID, rev.ID)
		require.NoError(t, err)
		assert.Zero(t, got.ApprovalsSoFar)
		form.Set("csrf", page.csrf(t))
		form.Set("verdict", "maybe")
		wrong := bob.post(address+"/verdict", form)
		assert.Equal(t, http.StatusBadRequest, wrong.status)
		assert.Contains(t, wrong.body, `id="problem">Verdict must be one of: approved, changes_requested.`)
		assert.Contains(t, wrong.body, "Reads well.</textarea>", "what was typed stays")

		form.Set("verdict", "approved")
		done := bob.post(address+"/verdict", form)
		require.Equal(t, http.StatusSeeOther, done.status, done.body)
		assert.Equal(t, address+"?done=approved", done.header.Get("Location"))
		after := bob.get(done.header.Get("Location"))
		assert.Contains(t, after.body, "You approved this version.")
		assert.Contains(t, after.body, "1 of 2 required")
		assert.Regexp(t, `<strong>Bob Stone</strong> approved, <time`, after.body)
		assert.Contains(t, after.body, "Reads well.")
		assert.NotContains(t, after.body, `action="`+address+`/verdict"`, "one verdict each")
		assert.NotContains(t, bob.get("/inbox").body, address, "a review given a verdict leaves the inbox")
		got, err = service.Get(ctx, s.org.ID, rev.ID)
		require.NoError(t, err)
		assert.Equal(t, 1, got.ApprovalsSoFar)
		again := bob.post(address+"/verdict", url.Values{"csrf": {page.csrf(t)}, "submission": {"sub_other"}, "verdict": {"changes_requested"}})
		assert.Equal(t, http.StatusConflict, again.status, "a second verdict is refused on the page")

		// Dan reads the report but was not asked: no form, and a post is
		// refused as a page error.
		dan := s.reader(t, "dan@example.com")
		seen := dan.get(address)
		require.Equal(t, http.StatusOK, seen.status)
		assert.NotContains(t, seen.body, `action="`+address+`/verdict"`)
		assert.Contains(t, seen.body, "Bob Stone", "the verdicts so far")
		refused := dan.post(address+"/verdict", url.Values{"csrf": {seen.csrf(t)}, "submission": {"sub_dan"}, "verdict": {"approved"}})
		assert.Equal(t, http.StatusForbidden, refused.status)
		assert.Contains(t, refused.body, `class="problem" role="alert"`)

		// Gus is a guest asked to review; another organisation's member
		// finds nothing.
		gus := s.reader(t, "gus@partner.example")
		theirs := gus.get(address)
		require.Equal(t, http.StatusOK, theirs.status, theirs.body)
		assert.Contains(t, theirs.body, `action="`+address+`/verdict"`)
		assert.Regexp(t, frameSrc, theirs.body)
		other, err := s.store.CreateOrganization(ctx, "Globex", "")
		require.NoError(t, err)
		_, err = s.store.CreateMember(ctx, other.ID, "eve@globex.example", "Eve", "")
		require.NoError(t, err)
		eve := s.reader(t, "eve@globex.example")
		assert.Equal(t, http.StatusNotFound, eve.get(address).status)
		assert.Equal(t, http.StatusNotFound, eve.post(address+"/verdict", url.Values{"csrf": {eve.get("/inbox").csrf(t)}, "verdict": {"approved"}}).status)

		// Settled, the review is in the reviewers' history, linked to its
		// page.
		cy := &models.Person{Organization: s.org, Member: members["cy@example.com"]}
		_, err = service.Verdict(ctx, cy.Actor(), rev.ID, "", reviews.VerdictInput{Verdict: "approved"})
		require.NoError(t, err)
		history := bob.get("/history")
		assert.Contains(t, history.body, `href="`+address+`"`)
		assert.Contains(t, history.body, "Review requested by report agent")
		closed := bob.get(address)
		assert.Contains(t, closed.body, "2 of 2 required")
		assert.NotContains(t, closed.body, `id="comment-form"`, "a settled review takes no comments")
	})
}

// TestCommentsOnPages: a reviewer quotes a passage of the pinned version
// from the review's page, a reader replies from the report's page, the
// opener resolves it and it folds away; a quote not in the version is
// refused on the page; someone the report is not shared with cannot
// comment.
func TestCommentsOnPages(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, service := newReviewingSite(t, db)
		ctx := context.Background()
		for _, m := range [][2]string{{"bob@example.com", "Bob Stone"}, {"cy@example.com", "Cy Young"}, {"eve@example.com", "Eve"}} {
			_, err := s.store.CreateMember(ctx, s.org.ID, m[0], m[1], "")
			require.NoError(t, err)
		}
		r := s.publish(t, "q3", []string{"bob@example.com", "cy@example.com"},
			[]bundle.InlineFile{{Path: "index.html", Content: "<!doctype html><h1>Q3</h1><p>Revenue rose 4% in EMEA. Costs fell.</p>"}})
		agent := models.KeyActor(s.org, &models.APIKey{ID: "key_test", Name: "report agent"}, nil)
		rev, err := service.Create(ctx, agent, &reviews.CreateInput{Fields: requests.Fields{Title: "Check Q3"}, ReportID: "q3", Reviewers: []string{"bob@example.com"}}, nil)
		require.NoError(t, err)
		address := "/reviews/" + rev.ID

		bob := s.reader(t, "bob@example.com")
		page := bob.get(address)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "No comments yet.")
		missing := bob.post("/comments", url.Values{"csrf": {page.csrf(t)}, "report": {r.ID}, "review": {rev.ID}, "quote": {"Revenue fell"}, "body": {"?"}})
		assert.Equal(t, http.StatusNotFound, missing.status, "a quote not in the version is refused")
		assert.Contains(t, missing.body, `<p class="problem" role="alert" id="problem">The quote does not occur in version 1 of q3.</p>`,
			"the review's page again, saying why")
		assert.Contains(t, missing.body, "aria-describedby=\"quote-hint\">\nRevenue fell</textarea>", "the quote typed stays")
		assert.Contains(t, missing.body, "required>\n?</textarea>", "the comment typed stays")
		posted := bob.post("/comments", url.Values{"csrf": {page.csrf(t)}, "report": {r.ID}, "review": {rev.ID},
			"quote": {"rose 4%\n in EMEA"}, "body": {"Before or after currency effects?"}})
		require.Equal(t, http.StatusSeeOther, posted.status, posted.body)
		assert.Regexp(t, `^`+address+`\?done=comment#thr_`, posted.header.Get("Location"))
		page = bob.get(address)
		assert.Contains(t, page.body, `<blockquote class="quote">rose 4% in EMEA</blockquote>`)
		assert.Contains(t, page.body, "Before or after currency effects?")
		got, err := service.Get(ctx, s.org.ID, rev.ID)
		require.NoError(t, err)
		assert.Equal(t, 1, got.ThreadCount, "a reviewer's thread counts on the review")

		cy := s.reader(t, "cy@example.com")
		reportPage := cy.get("/reports/q3")
		require.Equal(t, http.StatusOK, reportPage.status, reportPage.body)
		assert.Contains(t, reportPage.body, "rose 4% in EMEA", "the report's page lists every thread")
		assert.Contains(t, reportPage.body, `<script src="/static/review.js" defer></script>`)
		assert.Contains(t, reportPage.header.Get("Content-Security-Policy"), "script-src 'self'")
		thread := regexp.MustCompile(`name="thread" value="(thr_[^"]+)"`).FindStringSubmatch(reportPage.body)
		require.NotNil(t, thread, reportPage.body)
		assert.NotContains(t, reportPage.body, `action="/comments/`+thread[1]+`/resolve"`, "Cy neither opened it nor manages the report")
		replied := cy.post("/comments", url.Values{"csrf": {reportPage.csrf(t)}, "report": {r.ID}, "thread": {thread[1]}, "body": {"After, I think."}})
		require.Equal(t, http.StatusSeeOther, replied.status, replied.body)
		assert.Equal(t, address+"?done=comment#"+thread[1], replied.header.Get("Location"), "a review's thread lives on the review's page")
		general := cy.post("/comments", url.Values{"csrf": {reportPage.csrf(t)}, "report": {r.ID}, "body": {"Nice chart."}})
		require.Equal(t, http.StatusSeeOther, general.status, general.body)
		assert.Regexp(t, `^/reports/q3\?done=comment#thr_`, general.header.Get("Location"))

		page = bob.get(address)
		assert.Contains(t, page.body, "After, I think.")
		assert.NotContains(t, page.body, "Nice chart.", "the review's page shows the review's threads")
		resolved := bob.post("/comments/"+thread[1]+"/resolve", url.Values{"csrf": {page.csrf(t)}, "note": {"Answered."}})
		require.Equal(t, http.StatusSeeOther, resolved.status, resolved.body)
		page = bob.get(address)
		assert.Regexp(t, `(?s)<details class="resolved-threads">\s*<summary>1 resolved</summary>.*rose 4% in EMEA`, page.body)
		assert.Contains(t, page.body, "resolved by Bob Stone: Answered.")

		// An image an agent attached shows on the page, served only to
		// readers.
		png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
		with, err := comments.New(comments.Deps{Store: s.store, Blobs: s.reports.Blobs(), Reports: s.reports}).Post(ctx,
			agent, "q3", &comments.PostInput{Body: "The chart.", Images: []comments.ImageInput{{Data: base64.StdEncoding.EncodeToString([]byte(png))}}})
		require.NoError(t, err)
		sha := with.Comments[0].Images[0].SHA256
		withImage := cy.get("/reports/q3")
		assert.Contains(t, withImage.body, `<img class="comment-image" src="/comment-images/`+r.ID+`/`+sha+`" alt="Image 1 attached by report agent"`)
		img := cy.get("/comment-images/" + r.ID + "/" + sha)
		require.Equal(t, http.StatusOK, img.status)
		assert.Equal(t, "image/png", img.header.Get("Content-Type"))
		assert.Equal(t, "nosniff", img.header.Get("X-Content-Type-Options"))

		eve := s.reader(t, "eve@example.com")
		assert.Equal(t, http.StatusForbidden, eve.get("/comment-images/"+r.ID+"/"+sha).status, "only readers see a comment's image")
		refused := eve.post("/comments", url.Values{"csrf": {eve.get("/inbox").csrf(t)}, "report": {r.ID}, "body": {"Let me in."}})
		assert.Equal(t, http.StatusForbidden, refused.status, "the report is not shared with Eve")
	})
}
