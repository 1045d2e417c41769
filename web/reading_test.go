package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/bundle"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/publishscan"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reports"
	"github.com/assent-hq/assent/reportsite"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/wire"
)

var scanner = sync.OnceValues(publishscan.New)

// readingSite is the app and the report hosts on one listener, as in
// `assent dev`: the app at http://127.0.0.1:<port>, each report at
// http://<key>.localhost:<port>.
type readingSite struct {
	*site
	reports *reports.Service
	domain  string
}

// newReadingSite builds the site; each of with may add to what its
// services are built from.
func newReadingSite(t *testing.T, db *gorm.DB, with ...func(*app.Deps)) *readingSite {
	t.Helper()
	store := models.NewStore(db, testenv.Keys())
	engine := gin.New()
	var handler http.Handler = engine
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	blobs, err := blobstore.Open(context.Background(), "", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { blobs.Close() })
	sc, err := scanner()
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	built := app.Deps{Store: store, Blobs: blobs, Scanner: sc, Logger: quiet, BaseURL: srv.URL}
	for _, f := range with {
		f(&built)
	}
	svc := app.Build(built)
	rep := svc.Reports
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	domain := "localhost:" + port
	rs, err := reportsite.New(reportsite.Deps{Reports: rep, Blobs: blobs, AppURL: srv.URL, Domain: domain, Logger: quiet})
	require.NoError(t, err)
	s := &site{store: store, mailbox: mail.NewMailbox(0), db: db, url: srv.URL, services: svc}
	s.pages = web.New(web.Deps{Mailer: s.mailbox, BaseURL: srv.URL, Services: svc.Web(), Site: rs})
	s.pages.Mount(engine)
	handler = rs.Route(engine)
	// Every host name reaches the test server, as *.localhost does in a
	// browser.
	s.transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	s.org, err = store.CreateOrganization(context.Background(), "Acme & Co", "")
	require.NoError(t, err)
	s.ada, err = store.CreateMember(context.Background(), s.org.ID, "ada@example.com", "Ada Lovelace", models.RoleMember)
	require.NoError(t, err)
	return &readingSite{site: s, reports: rep, domain: domain}
}

// publish makes a report owned by Ada, shared with audience.
func (s *readingSite) publish(t *testing.T, slug string, audience []string, files []bundle.InlineFile) *models.Report {
	t.Helper()
	p := models.KeyActor(s.org, &models.APIKey{}, s.ada)
	r, v, err := s.reports.Create(context.Background(), p, &reports.CreateInput{Title: "Report " + slug, Slug: &slug,
		Source: reports.Source{Files: &files}, Audience: audience}, nil)
	require.NoError(t, err)
	require.Equal(t, "published", v.State, "%v", v.Findings.V)
	return r
}

func (s *readingSite) origin(r *models.Report) string { return "http://" + r.Key + "." + s.domain }

// follow gets u and follows redirects one by one, as a browser would,
// returning the last page and every address visited.
func (b *browser) follow(u string) (page, []string) {
	b.t.Helper()
	var seen []string
	for range 10 {
		seen = append(seen, u)
		p := b.get(u)
		if p.status != http.StatusSeeOther && p.status != http.StatusFound {
			return p, seen
		}
		loc, err := url.Parse(p.header.Get("Location"))
		require.NoError(b.t, err)
		base, _ := url.Parse(u)
		u = base.ResolveReference(loc).String()
	}
	b.t.Fatalf("too many redirects: %v", seen)
	return page{}, nil
}

func (s *readingSite) reader(t *testing.T, email string) *browser {
	b := s.browser(t)
	if email != "" {
		b.signIn(s.site, email)
	}
	return b
}

func (s *readingSite) events(t *testing.T, r *models.Report, kind string) []models.Event {
	t.Helper()
	all, err := s.store.ListEvents(context.Background(), s.org.ID, r.ID)
	require.NoError(t, err)
	var out []models.Event
	for _, e := range all {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestReadingAReportOnItsOwnOrigin walks the sign-in handshake, the
// headers every report host sends, the grant checked on every request,
// views, the request for access, archiving and signing out.
func TestReadingAReportOnItsOwnOrigin(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob Stone", "")
		require.NoError(t, err)
		_, err = s.store.CreateMember(ctx, s.org.ID, "cy@example.com", "Cy Young", "")
		require.NoError(t, err)
		_, err = testenv.CreateTeam(s.store, ctx, s.org.ID, "Design", models.TeamKindTeam, []string{bob.Email})
		require.NoError(t, err)
		r := s.publish(t, "dash", []string{"Design"}, []bundle.InlineFile{
			{Path: "index.html", Content: "<!doctype html><title>Dash</title><h1>Dash</h1><script src=app.js></script>"},
			{Path: "app.js", Content: "fetch('_data/metrics')"},
			{Path: "data.bin", Content: "<html><script>alert(1)</script>"},
		})
		_, _, err = s.reports.PutDataset(ctx, s.org.ID, (&models.Person{Organization: s.org, Member: s.ada}).Actor(), r.ID, "metrics", []byte(`{"kpis":[42]}`))
		require.NoError(t, err)
		other := s.publish(t, "other", []string{"everyone"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Other</h1>"}})

		b := s.reader(t, "bob@example.com")
		got, seen := b.follow(s.origin(r) + "/")
		require.Equal(t, http.StatusOK, got.status, got.body)
		assert.Contains(t, got.body, "<h1>Dash</h1>")
		require.Len(t, seen, 4, "report host → app → ticket back → the page: %v", seen)
		assert.True(t, strings.HasPrefix(seen[1], s.url+"/read/"+r.Key), seen[1])
		assert.Contains(t, seen[2], "/_assent/enter?")
		h := got.header
		assert.Equal(t, reportPolicy+s.url,
			h.Get("Content-Security-Policy"))
		assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
		assert.Equal(t, "same-origin", h.Get("Cross-Origin-Opener-Policy"))
		assert.Equal(t, "same-site", h.Get("Cross-Origin-Resource-Policy"))
		assert.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))

		// Origins the organisation allows widen its reports' reach, and
		// only theirs.
		origins := models.StringList{"https://cdn.example.com", "https://*.charts.example"}
		_, err = s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{ReportOrigins: &origins})
		require.NoError(t, err)
		widened, _ := b.follow(s.origin(r) + "/_data/metrics") // not a page: no view
		csp := widened.header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "; connect-src 'self' https://cdn.example.com https://*.charts.example;")
		assert.Contains(t, csp, "; script-src 'self' https://cdn.example.com https://*.charts.example 'unsafe-inline'")
		assert.Contains(t, csp, "; form-action 'self';", "forms still post only to the report itself")
		origins = models.StringList{}
		_, err = s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{ReportOrigins: &origins})
		require.NoError(t, err)

		reportURL, _ := url.Parse(s.origin(r))
		cookies := b.c.Jar.Cookies(reportURL)
		require.Len(t, cookies, 1, "only the reader cookie goes to the report host, never the app's session")
		assert.Equal(t, reportsite.ReaderCookie, cookies[0].Name)

		js := b.get(s.origin(r) + "/app.js")
		assert.Equal(t, "text/javascript; charset=utf-8", js.header.Get("Content-Type"))
		assert.Equal(t, "application/octet-stream", b.get(s.origin(r)+"/data.bin").header.Get("Content-Type"), "types come from the extension, never sniffed")
		data := b.get(s.origin(r) + "/_data/metrics")
		require.Equal(t, http.StatusOK, data.status)
		assert.Equal(t, `{"kpis":[42]}`, data.body)
		assert.Equal(t, "application/json", data.header.Get("Content-Type"))
		assert.Equal(t, "no-store", data.header.Get("Cache-Control"))
		assert.Equal(t, http.StatusNotFound, b.get(s.origin(r)+"/_data/nope").status)
		assert.Equal(t, http.StatusNotFound, b.get(s.origin(r)+"/signin").status, "a report host serves no app page")
		sibling, _ := http.NewRequest(http.MethodGet, s.origin(r)+"/app.js", nil)
		sibling.Header.Set("Sec-Fetch-Site", "same-site")
		sibling.Header.Set("Sec-Fetch-Mode", "no-cors")
		assert.Equal(t, http.StatusForbidden, b.do(sibling).status, "another report's page may not load this one's script")
		framed, _ := http.NewRequest(http.MethodGet, s.origin(r)+"/", nil)
		framed.Header.Set("Sec-Fetch-Site", "cross-site")
		framed.Header.Set("Sec-Fetch-Mode", "navigate")
		assert.Equal(t, http.StatusOK, b.do(framed).status, "the app's frame navigates here")
		req, _ := http.NewRequest(http.MethodPost, s.origin(r)+"/", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, b.do(req).status)

		// A ticket works once, and only for its own report's host.
		replay := b.get(seen[2])
		assert.Equal(t, http.StatusSeeOther, replay.status)
		assert.True(t, strings.HasPrefix(replay.header.Get("Location"), s.url+"/read/"), "a used ticket starts over at the app")
		ticketed := b.get(s.url + "/read/" + r.Key + "?next=/")
		elsewhere := strings.Replace(ticketed.header.Get("Location"), r.Key, other.Key, 1)
		fresh := s.reader(t, "")
		stolen := fresh.get(elsewhere)
		assert.Equal(t, http.StatusSeeOther, stolen.status)
		assert.Empty(t, stolen.header.Values("Set-Cookie"), "a ticket opens no other report")

		// Views: every page view is recorded; report.viewed fires once per
		// 30 minutes per viewer.
		b.get(s.origin(r) + "/")
		views, err := s.store.Views(ctx, r.ID)
		require.NoError(t, err)
		assert.Len(t, views, 3, "the page opened three times: signing in, framed, and again")
		assert.Len(t, s.events(t, r, "report.viewed"), 1)

		// Un-sharing takes effect on the next request.
		_, err = s.reports.Unshare(ctx, s.org.ID, models.Actor{ID: s.ada.ID, Name: "Ada", IsPerson: true}, r.ID, &reports.AudienceInput{Audience: []string{"Design"}})
		require.NoError(t, err)
		denied := b.get(s.origin(r) + "/")
		assert.Equal(t, http.StatusForbidden, denied.status)
		assert.Contains(t, denied.body, "Request access")
		assert.Equal(t, http.StatusForbidden, b.get(s.origin(r)+"/_data/metrics").status)

		// Cy is not in the audience: the app says so and takes a request.
		cy := s.reader(t, "cy@example.com")
		refused, _ := cy.follow(s.origin(r) + "/")
		assert.Equal(t, http.StatusForbidden, refused.status)
		req2 := cy.post("/read/"+r.Key+"/access", url.Values{"csrf": {refused.csrf(t)}})
		assert.Equal(t, http.StatusOK, req2.status, req2.body)
		cy.post("/read/"+r.Key+"/access", url.Values{"csrf": {refused.csrf(t)}})
		asked := s.events(t, r, "access.requested")
		require.Len(t, asked, 1, "asking twice in a day tells the owner once")
		assert.Contains(t, string(asked[0].Data), "cy@example.com")
		s.pages.Wait()
		var toAda int
		for _, m := range s.mailbox.Messages() {
			if len(m.To) == 1 && m.To[0] == "ada@example.com" && strings.Contains(m.Subject, "asks to read") {
				toAda++
			}
		}
		assert.Equal(t, 1, toAda, "the owner is emailed")

		// Shared again with Bob by name; signing out of the app ends the
		// report host's session too.
		_, err = s.reports.Share(ctx, s.org.ID, models.Actor{ID: s.ada.ID, Name: "Ada", IsPerson: true}, r.ID, &reports.AudienceInput{Audience: []string{"Bob Stone"}})
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, b.get(s.origin(r)+"/").status)
		inbox := b.get("/inbox")
		b.post("/signout", url.Values{"csrf": {inbox.csrf(t)}})
		out := b.get(s.origin(r) + "/")
		assert.Equal(t, http.StatusSeeOther, out.status, "signed out of the app, out of the report too")

		// Archived: 410 on the report host and in the app.
		_, err = s.reports.Archive(ctx, models.KeyActor(s.org, &models.APIKey{}, s.ada), r.ID, &reports.ArchiveInput{})
		require.NoError(t, err)
		assert.Equal(t, http.StatusGone, b.get(s.origin(r)+"/").status)
		assert.Equal(t, http.StatusNotFound, b.get("http://nosuchkey."+s.domain+"/").status)
	})
}

// TestPublicReportsNeedNoSignIn: a report shared with the public opens in
// a fresh browser; one not public sends it to sign in.
func TestPublicReportsNeedNoSignIn(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		pub := s.publish(t, "pub", []string{"public"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Open</h1>"}})
		closed := s.publish(t, "closed", []string{"everyone"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Closed</h1>"}})
		anon := s.reader(t, "")
		got := anon.get(s.origin(pub) + "/")
		require.Equal(t, http.StatusOK, got.status)
		assert.Contains(t, got.body, "Open")
		assert.Len(t, s.events(t, pub, "report.viewed"), 1)
		away := anon.get(s.origin(closed) + "/")
		assert.Equal(t, http.StatusSeeOther, away.status)
		next, _ := anon.follow(s.origin(closed) + "/")
		assert.Contains(t, next.body, "Sign in")

		// The report's url, the app's address, opens too: a client that
		// never signed in is sent to the report's origin, with no cookie
		// set on the way, and its view is counted as anonymous.
		address := wire.NewReport(pub, nil, s.url).URL
		stranger := s.reader(t, "")
		got, seen := stranger.follow(address)
		require.Equal(t, http.StatusOK, got.status, "%v", seen)
		assert.Contains(t, got.body, "Open")
		assert.Equal(t, []string{address, s.origin(pub) + "/"}, seen)
		for _, u := range seen {
			assert.Empty(t, stranger.get(u).header.Values("Set-Cookie"), u)
		}
		totals, err := s.store.ViewTotals(context.Background(), pub)
		require.NoError(t, err)
		assert.Equal(t, models.ViewTotals{TotalViews: 3, AnonymousViews: 3}, *totals)
		got, _ = stranger.follow(wire.NewReport(closed, nil, s.url).URL)
		assert.Contains(t, got.body, "Sign in", "a report not public still asks who is reading")
		got, _ = stranger.follow(s.url + "/reports/nosuch")
		assert.Contains(t, got.body, "Sign in", "an address naming nothing public asks to sign in, saying nothing more")

		// A public report at a slug another organisation's public report
		// also has is opened from its own origin, not guessed.
		other, err := s.store.CreateOrganization(context.Background(), "Other", "")
		require.NoError(t, err)
		owner, err := s.store.CreateMember(context.Background(), other.ID, "olga@other.example", "Olga", models.RoleOwner)
		require.NoError(t, err)
		files := []bundle.InlineFile{{Path: "index.html", Content: "<h1>Theirs</h1>"}}
		slug := "pub"
		_, _, err = s.reports.Create(context.Background(), models.KeyActor(other, &models.APIKey{}, owner), &reports.CreateInput{
			Title: "Theirs", Slug: &slug, Source: reports.Source{Files: &files}, Audience: []string{"public"}}, nil)
		require.NoError(t, err)
		got, _ = stranger.follow(address)
		assert.Contains(t, got.body, "Sign in")

		// Someone signed in to another organisation is sent to the
		// origin of a public report the app cannot show them.
		theirs := s.publish(t, "mine-only", []string{"public"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Mine</h1>"}})
		_, err = s.store.CreateMember(context.Background(), other.ID, "oli@other.example", "Oli", "")
		require.NoError(t, err)
		oli := s.browser(t)
		oli.signIn(s.site, "oli@other.example")
		got, seen = oli.follow(wire.NewReport(theirs, nil, s.url).URL)
		require.Equal(t, http.StatusOK, got.status, "%v", seen)
		assert.Contains(t, got.body, "Mine")
	})
}

// TestReportPageInTheApp: the list of reports shared with me, the
// report's page framing its own origin, and the owner's share form.
func TestReportPageInTheApp(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob Stone", "")
		require.NoError(t, err)
		r := s.publish(t, "team/plan", nil, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Plan</h1>"}})

		bob := s.reader(t, "bob@example.com")
		list := bob.get("/reports")
		require.Equal(t, http.StatusOK, list.status)
		assert.NotContains(t, list.body, "Report team/plan")
		assert.Equal(t, http.StatusForbidden, bob.get("/reports/team/plan").status)

		ada := s.reader(t, "ada@example.com")
		page := ada.get("/reports/team/plan")
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, `<iframe class="report" src="`+s.origin(r)+`/_assent/enter?`)
		assert.Contains(t, page.header.Get("Content-Security-Policy"), "frame-src http://*."+s.domain)
		shared := ada.post("/reports/team/plan", url.Values{"csrf": {page.csrf(t)}, "action": {"share"}, "audience": {"Bob Stone"}})
		require.Equal(t, http.StatusOK, shared.status, shared.body)
		assert.Contains(t, shared.body, "Shared with Bob Stone")
		nearMiss := ada.post("/reports/team/plan", url.Values{"csrf": {page.csrf(t)}, "action": {"share"}, "audience": {"Bbo Stone"}})
		assert.Equal(t, http.StatusBadRequest, nearMiss.status)
		assert.Contains(t, nearMiss.body, "bob@example.com", "the page offers the candidates")

		_, err = s.store.CreateMember(ctx, s.org.ID, "root@example.com", "Root Admin", models.RoleAdmin)
		require.NoError(t, err)
		adm := s.reader(t, "root@example.com")
		managed := adm.get("/reports/team/plan")
		require.Equal(t, http.StatusOK, managed.status, "an administrator manages the report")
		assert.NotContains(t, managed.body, "<iframe", "but reads it only by a grant")
		assert.Contains(t, managed.body, "not shared with you")
		unreadable, _ := adm.follow(s.origin(r) + "/")
		assert.Equal(t, http.StatusForbidden, unreadable.status)

		list = bob.get("/reports")
		assert.Contains(t, list.body, "Report team/plan")
		assert.Equal(t, http.StatusOK, bob.get("/reports/team/plan").status)
		assert.Equal(t, http.StatusForbidden, bob.post("/reports/team/plan", url.Values{"csrf": {list.csrf(t)}, "action": {"unshare"}, "audience": {"Bob Stone"}}).status,
			"a reader does not manage the report")
	})
}

// TestGuestsReadOnlyWhatIsSharedWithThem: a guest signs in like a member
// and reads a report shared with them; `everyone` means members, so a
// report shared with everyone stays closed to them.
func TestGuestsReadOnlyWhatIsSharedWithThem(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		_, _, err := s.store.CreateGuest(context.Background(), s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		theirs := s.publish(t, "for-gus", []string{"gus@partner.example"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>For Gus</h1>"}})
		members := s.publish(t, "members", []string{"everyone"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Members</h1>"}})
		gus := s.reader(t, "gus@partner.example")
		got, _ := gus.follow(s.origin(theirs) + "/")
		require.Equal(t, http.StatusOK, got.status, got.body)
		assert.Contains(t, got.body, "For Gus")
		refused, _ := gus.follow(s.origin(members) + "/")
		assert.Equal(t, http.StatusForbidden, refused.status)
		list := gus.get("/reports")
		assert.Contains(t, list.body, "Report for-gus")
		assert.NotContains(t, list.body, "Report members")
	})
}

// TestShareFormIsCheckedLikeTheAPI: an empty share is refused, naming the
// field, and a guest's page does not list who else reads the report.
func TestShareFormIsCheckedLikeTheAPI(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		_, _, err := s.store.CreateGuest(context.Background(), s.org.ID, "gus@partner.example", "Gus")
		require.NoError(t, err)
		s.publish(t, "plan", []string{"gus@partner.example", "everyone"}, []bundle.InlineFile{{Path: "index.html", Content: "<h1>Plan</h1>"}})
		ada := s.reader(t, "ada@example.com")
		page := ada.get("/reports/plan")
		empty := ada.post("/reports/plan", url.Values{"csrf": {page.csrf(t)}, "action": {"share"}, "audience": {" , "}})
		assert.Equal(t, http.StatusBadRequest, empty.status)
		assert.Contains(t, empty.body, `role="alert" id="problem">Share with `, "named by the form's label")
		assert.Contains(t, empty.body, `name="audience" value=" , " required aria-invalid="true"`, "what was typed stays, marked")
		assert.Contains(t, page.body, "gus@partner.example", "a member sees the audience")
		gus := s.reader(t, "gus@partner.example")
		theirs := gus.get("/reports/plan")
		require.Equal(t, http.StatusOK, theirs.status)
		assert.NotContains(t, theirs.body, "Shared with", "a guest does not see who else reads it")
	})
}

// TestPinnedVersionsOnTheReportsOrigin: any published version is served
// under /_assent/v/<n>/ beside the live one, with the same handshake,
// headers, grant check, views and archive; held and unknown versions are
// not. Every page carries the selection script, which is a file like the
// others: for readers with a grant only.
func TestPinnedVersionsOnTheReportsOrigin(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newReadingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob Stone", "")
		require.NoError(t, err)
		_, err = s.store.CreateMember(ctx, s.org.ID, "cy@example.com", "Cy Young", "")
		require.NoError(t, err)
		r := s.publish(t, "pinned", []string{"bob@example.com"}, []bundle.InlineFile{
			{Path: "index.html", Content: "<!doctype html><html><head><title>One</title></head><body><h1>Version one</h1><a href=more/page.html>more</a></body></html>"},
			{Path: "more/page.html", Content: "<p>Page one</p>"},
			{Path: "style.css", Content: "h1 { color: red }"},
		})
		_, _, err = s.reports.PutDataset(ctx, s.org.ID, (&models.Person{Organization: s.org, Member: s.ada}).Actor(), r.ID, "metrics", []byte(`{"kpis":[1]}`))
		require.NoError(t, err)
		ada := models.KeyActor(s.org, &models.APIKey{}, s.ada)
		two := "<!doctype html><h1>Version two</h1>"
		_, v2, err := s.reports.Publish(ctx, ada, r.ID, &reports.VersionInput{Source: reports.Source{Content: &two}}, nil)
		require.NoError(t, err)
		require.Equal(t, "published", v2.State)
		held := `<!doctype html><base href="https://elsewhere.example/"><h1>Held</h1>`
		_, v3, err := s.reports.Publish(ctx, ada, r.ID, &reports.VersionInput{Source: reports.Source{Content: &held}}, nil)
		require.NoError(t, err)
		require.Equal(t, "held", v3.State)
		origin := s.origin(r)

		// A fresh reader is signed in and lands on the pinned version.
		b := s.reader(t, "bob@example.com")
		got, seen := b.follow(origin + "/_assent/v/1/")
		require.Equal(t, http.StatusOK, got.status, got.body)
		assert.Contains(t, got.body, "<h1>Version one</h1>")
		assert.Equal(t, s.url+"/read/"+r.Key+"?next=%2F_assent%2Fv%2F1%2F", seen[1])
		assert.Equal(t, origin+"/_assent/v/1/", seen[len(seen)-1])
		assert.Contains(t, got.body, `<title>One</title><script src="/_assent/select.js" defer></script></head>`, "the tag goes on the served page")
		assert.Equal(t, reportPolicy+s.url,
			got.header.Get("Content-Security-Policy"))
		assert.Equal(t, "private, no-cache", got.header.Get("Cache-Control"))
		assert.Equal(t, strconv.Itoa(len(got.body)), got.header.Get("Content-Length"))
		etag := got.header.Get("ETag")
		again, _ := http.NewRequest(http.MethodGet, origin+"/_assent/v/1/", nil)
		again.Header.Set("If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, b.do(again).status)
		head, _ := http.NewRequest(http.MethodHead, origin+"/_assent/v/1/", nil)
		assert.Equal(t, strconv.Itoa(len(got.body)), b.do(head).header.Get("Content-Length"), "HEAD counts the tag too")

		assert.Contains(t, b.get(origin+"/").body, "<h1>Version two</h1>", "the live version is still at the root")
		assert.Contains(t, b.get(origin+"/_assent/v/2/").body, "<h1>Version two</h1>")
		page := b.get(origin + "/_assent/v/1/more/page.html")
		assert.Equal(t, http.StatusOK, page.status)
		assert.Equal(t, `<script src="/_assent/select.js" defer></script><p>Page one</p>`, page.body)
		css := b.get(origin + "/_assent/v/1/style.css")
		assert.Equal(t, "text/css; charset=utf-8", css.header.Get("Content-Type"))
		assert.Equal(t, "h1 { color: red }", css.body, "only pages get the tag")
		assert.Equal(t, http.StatusNotFound, b.get(origin+"/style.css").status, "version 2 has no stylesheet")
		data := b.get(origin + "/_assent/v/1/_data/metrics")
		require.Equal(t, http.StatusOK, data.status, data.body)
		assert.Equal(t, `{"kpis":[1]}`, data.body, "datasets are not versioned")
		assert.Equal(t, "no-store", data.header.Get("Cache-Control"))
		bare := b.get(origin + "/_assent/v/1")
		assert.Equal(t, http.StatusMovedPermanently, bare.status)
		assert.Equal(t, "/_assent/v/1/", bare.header.Get("Location"))
		for _, p := range []string{"/_assent/v/3/", "/_assent/v/3/_data/metrics", "/_assent/v/4/", "/_assent/v/0/", "/_assent/v/01/", "/_assent/v/x/"} {
			assert.Equal(t, http.StatusNotFound, b.get(origin+p).status, "%s: held, unknown or not a version", p)
		}
		views, err := s.store.Views(ctx, r.ID)
		require.NoError(t, err)
		var versions []int
		for _, v := range views {
			versions = append(versions, v.Version)
		}
		assert.ElementsMatch(t, []int{1, 1, 2, 2, 1}, versions, "each view names the version served")

		script := b.get(origin + "/_assent/select.js")
		require.Equal(t, http.StatusOK, script.status)
		assert.Equal(t, "text/javascript; charset=utf-8", script.header.Get("Content-Type"))
		assert.Equal(t, "private, max-age=300", script.header.Get("Cache-Control"))
		assert.Contains(t, script.body, `var appOrigin = "`+s.url+`";`, "the script posts to the app's origin")

		// Without a grant, nothing under the prefix either.
		anon := s.reader(t, "")
		assert.Equal(t, http.StatusSeeOther, anon.get(origin+"/_assent/select.js").status)
		cy := s.reader(t, "cy@example.com")
		refused, _ := cy.follow(origin + "/_assent/v/1/")
		assert.Equal(t, http.StatusForbidden, refused.status)
		noScript, _ := cy.follow(origin + "/_assent/select.js")
		assert.Equal(t, http.StatusForbidden, noScript.status)
		denied := cy.get(origin + "/_assent/v/1/_data/metrics")
		assert.Equal(t, http.StatusForbidden, denied.status)
		assert.Equal(t, "application/json", denied.header.Get("Content-Type"))

		_, err = s.reports.Archive(ctx, ada, r.ID, &reports.ArchiveInput{})
		require.NoError(t, err)
		assert.Equal(t, http.StatusGone, b.get(origin+"/_assent/v/1/").status)
	})
}

// reportPolicy is a report host's Content-Security-Policy but its
// frame-ancestors, the app's origin.
const reportPolicy = "sandbox allow-scripts allow-same-origin allow-forms allow-popups allow-downloads; default-src 'self' data: blob:; " +
	"script-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; style-src 'self' 'unsafe-inline' data: blob:; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors "
