package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/blobstore"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/mail"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/pushtest"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/internal/testenv/temporalenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/reportsite"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/worker"
)

// The pages' authorisation matrix: every route web.Pages serves, one line
// each (a route whose answer depends on the resource or the form may have
// more), with the status every kind of visitor gets from it, as the API's
// matrix (api/authz_matrix_test.go) does for /api/v1.
// TestPagesAuthzMatrixCoversEveryRoute fails when a served route has no
// row; TestPagesAuthzMatrix sends every request.
//
// A row is {method, path, resource, form, want}. Each visitor is a browser
// with its own cookies, sending the CSRF token a page gave it (the pre-
// session token for anon), so authorisation and not the token decides;
// csrf_test.go covers posts without it. The principals:
//
//	anon           no session
//	owner          Ada, an owner of the first organisation
//	administrator  Bob, an administrator
//	member         Cy, a plain member: the one approver, respondent and
//	               reviewer of the requests the rows make
//	guest          Gail, an admitted guest of the first organisation
//	othermember    Olga, an owner of another organisation
//	members        = owner administrator member
//	admins         = owner administrator
//
// The path is the route as gin registers it; its parameters are filled
// from the row's resource, made fresh for every call of a POST and once
// per database for a GET. The form is sent as the body of a POST and the
// query of a GET; in it {unique} is a fresh name, {newMember} a fresh
// member's email, {receiver} a local
// webhook receiver, {report} a report every member reads, {endpoint},
// {p256dh} and {auth} a fresh browser's push subscription (or, with the
// resource cyPush, Cy's).
//
// Signed out, a page that needs a session answers 303 to the sign-in
// page. Another organisation's visitor must get the same answer for this
// organisation's real ids as for ids that do not exist, and no 2xx of
// theirs may carry this organisation's ids.
var pagesMatrix = []pageRow{
	{"GET", web.StylesheetPath, noPage, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", "/static/review.js", noPage, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", web.IconPath, noPage, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", "/favicon.ico", noPage, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", "/static/push.js", noPage, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", "/push-worker.js", noPage, ``, "anon=200 members=200 guest=200 othermember=200"},

	{"GET", "/", noPage, ``, "anon=302 members=302 guest=302 othermember=302"},
	{"GET", "/signin", noPage, ``, "anon=200 members=302 guest=302 othermember=302"}, // signed in: to the inbox
	{"POST", "/signin", noPage, `email=nobody@example.com`, "anon=200 members=200 guest=200 othermember=200"},
	{"GET", "/signin/link", signInLink, `token={token}`, "anon=200 members=200 guest=200 othermember=200"},
	{"POST", "/signin/link", signInLink, `token={token}`, "anon=303 members=303 guest=303 othermember=303"},
	{"POST", "/signout", ownSession, ``, "anon=303 members=303 guest=303 othermember=303"},
	{"GET", "/signin/oidc", noPage, ``, "anon=302 members=302 guest=302 othermember=302"},
	{"GET", "/signin/oidc/callback", noPage, `state=forged&code=forged`, "anon=400 members=400 guest=400 othermember=400"},

	{"GET", "/inbox", noPage, ``, "anon=303 members=200 guest=200 othermember=200"},
	{"GET", "/history", noPage, ``, "anon=303 members=200 guest=200 othermember=200"},
	// A member's own delegation, beginning in the future so that no other
	// row's request asks a delegate; a guest has none to set or end.
	{"GET", "/settings", noPage, ``, "anon=303 members=200 guest=200 othermember=200"},
	{"POST", "/settings/delegation", noPage, `to={newMember}&from=2098-01-01T00:00&until=2099-01-01T00:00`, "anon=303 members=303 guest=403 othermember=400"},
	{"POST", "/settings/delegation/end", noPage, ``, "anon=303 members=303 guest=403 othermember=303"},
	// A member mints their own token (shown once); a guest has none.
	{"POST", "/settings/tokens", noPage, `scopes=approvals:read`, "anon=303 members=201 guest=403 othermember=201"},
	// A member revokes their own token; anyone else's, and any key, is
	// not found.
	{"POST", "/settings/tokens/:id/revoke", cyOwnToken, `confirm=yes`, "anon=303 admins=404 member=303 guest=403 othermember=404"},
	{"POST", "/settings/tokens/:id/revoke", anAgentKey, `confirm=yes`, "anon=303 members=404 guest=403 othermember=404"},
	// Mandates are members': each sees their own, owners and
	// administrators the organisation's; a member revokes their own.
	{"GET", "/mandates", noPage, ``, "anon=303 members=200 guest=403 othermember=200"},
	{"POST", "/mandates/:id/revoke", bobMandate, `confirm=yes`, "anon=303 admins=303 member=404 guest=403 othermember=404"},
	{"POST", "/mandates/:id/revoke", cyMandate, `confirm=yes`, "anon=303 members=303 guest=403 othermember=404"},
	{"POST", "/push/subscriptions", noPage, `endpoint={endpoint}&p256dh={p256dh}&auth={auth}`, "anon=303 members=204 guest=204 othermember=204"},
	// Cy's browser: anyone else turning it off or asking after it touches
	// only their own subscriptions, of which it is none.
	{"POST", "/push/subscriptions/delete", cyPush, `endpoint={endpoint}`, "anon=303 members=204 guest=204 othermember=204"},
	{"POST", "/push/subscriptions/status", cyPush, `endpoint={endpoint}`, "anon=303 members=200 guest=200 othermember=200"},

	{"GET", "/approvals/:id", pendingApproval, ``, "anon=303 members=200 guest=404 othermember=404"},
	{"POST", "/approvals/:id/decision", pendingApproval, `decision=approve&submission={unique}`, "anon=303 admins=403 member=303 guest=404 othermember=404"},
	// Approving with a standing mandate: only an approver who could
	// decide it alone grants one (members may, in this organisation).
	{"POST", "/approvals/:id/decision", gateApproval, `decision=approve&submission={unique}&mandate=yes&mandate.until={until}&mandate.count=10&mandate.window=day`, "anon=303 admins=403 member=303 guest=404 othermember=404"},
	{"GET", "/approvals/:id/decide/:decision", pendingApproval, ``, "anon=303 members=200 guest=404 othermember=404"},
	{"POST", "/approvals/:id/questions", pendingApproval, `question=Which+customer%3F&submission={unique}`, "anon=303 admins=403 member=303 guest=404 othermember=404"},
	// The emailed link is the credential: whoever holds Cy's link decides
	// as Cy, signed in or not; a link nobody was given opens nothing.
	{"GET", "/approvals/:id/link/:token", approvalLink, ``, "anon=200 members=200 guest=200 othermember=200"},
	{"POST", "/approvals/:id/link/:token", approvalLink, `decision=approve&submission={unique}`, "anon=303 members=303 guest=303 othermember=303"},
	{"GET", "/approvals/:id/link/:token", forgedLink, ``, "anon=404 members=404 guest=404 othermember=404"},
	{"POST", "/approvals/:id/link/:token", forgedLink, `decision=approve&submission={unique}`, "anon=404 members=404 guest=404 othermember=404"},

	{"GET", "/collections/:id", openCollection, ``, "anon=303 members=200 guest=404 othermember=404"},
	{"POST", "/collections/:id/replies", openCollection, `action=submit&answer.q1=42&submission={unique}`, "anon=303 admins=403 member=303 guest=404 othermember=404"},
	{"GET", "/reviews/:id", openReview, ``, "anon=303 members=200 guest=404 othermember=404"},
	{"POST", "/reviews/:id/verdict", openReview, `verdict=approved&submission={unique}`, "anon=303 admins=403 member=303 guest=404 othermember=404"},
	{"POST", "/comments", noPage, `report={report}&body=Looks+right.`, "anon=303 members=303 guest=403 othermember=404"},
	{"POST", "/comments/:id/resolve", openThread, `note=Done.`, "anon=303 admins=303 member=403 guest=403 othermember=404"}, // as the API: its opener, owners and administrators
	{"GET", "/comment-images/:report/:sha", reportWithImage, ``, "anon=303 members=200 guest=403 othermember=404"},

	{"GET", "/reports", noPage, ``, "anon=303 members=200 guest=200 othermember=200"},
	// agentReport is shared with nobody: owners and administrators manage
	// it without reading it. sharedReport every member reads, and only
	// they manage; Cy owns memberReport.
	{"GET", "/reports/*slug", agentReport, ``, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"GET", "/reports/*slug", sharedReport, ``, "anon=303 members=200 guest=403 othermember=404"},
	{"GET", "/reports/*slug", memberReport, ``, "anon=303 members=200 guest=403 othermember=404"},
	{"POST", "/reports/*slug", agentReport, `action=share&audience=everyone`, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"POST", "/reports/*slug", sharedReport, `action=unshare&audience=everyone`, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"POST", "/reports/*slug", sharedReport, `action=rollback&version=1`, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"POST", "/reports/*slug", sharedReport, `action=viewers&showViewers=true`, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"POST", "/reports/*slug", memberReport, `action=share&audience=everyone`, "anon=303 members=200 guest=403 othermember=404"},
	{"POST", "/reports/*slug", memberReport, `action=rollback&version=1`, "anon=303 members=200 guest=403 othermember=404"},
	// A guest reads what is shared with them and never manages it.
	{"GET", "/reports/*slug", guestReport, ``, "anon=303 admins=200 member=403 guest=200 othermember=404"},
	{"POST", "/reports/*slug", guestReport, `action=unshare&audience=gail%40partner.example`, "anon=303 admins=200 member=403 guest=403 othermember=404"},
	{"GET", "/read/:key", guestReport, ``, "anon=303 admins=403 member=403 guest=303 othermember=404"},
	{"GET", "/read/:key", agentReport, ``, "anon=303 members=403 guest=403 othermember=404"},
	{"GET", "/read/:key", sharedReport, ``, "anon=303 members=303 guest=403 othermember=404"},
	{"POST", "/read/:key/access", agentReport, ``, "anon=303 members=200 guest=200 othermember=404"},

	{"GET", "/admin", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"GET", "/admin/members", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/members", noPage, `email={unique}@example.com&role=member`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/members", noPage, `email={unique}@example.com&role=owner`, adminPages + "owner=303 administrator=403 othermember=303"},
	{"POST", "/admin/members/:id/role", plainMember, `role=admin`, adminPages + "admins=303 othermember=404"},
	// Only an owner makes an owner or changes one.
	{"POST", "/admin/members/:id/role", plainMember, `role=owner`, adminPages + "owner=303 administrator=403 othermember=404"},
	{"POST", "/admin/members/:id/role", anOwner, `role=member`, adminPages + "owner=303 administrator=403 othermember=404"},
	{"POST", "/admin/members/:id/active", plainMember, `active=false`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/members/:id/active", anOwner, `active=false`, adminPages + "owner=303 administrator=403 othermember=404"},
	{"GET", "/admin/teams", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/teams", noPage, `name={unique}&kind=team`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/teams/:id", aTeam, `name={unique}`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/teams/:id/remove", aTeam, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/guests", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/guests", noPage, `email={unique}@partner.example`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/guests/:id", aGuest, `name={unique}`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/guests/:id/remove", aGuest, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/keys", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/keys", noPage, `name={unique}&scopes=flows:read`, adminPages + "admins=201 othermember=201"}, // shows the secret once
	{"POST", "/admin/keys/:id/revoke", anAgentKey, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/webhooks", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/webhooks", noPage, `url={receiver}&format=json`, adminPages + "admins=201 othermember=201"}, // shows the secret once
	{"GET", "/admin/webhooks/:id", webhookEndpoint, ``, adminPages + "admins=200 othermember=404"},
	{"POST", "/admin/webhooks/:id", webhookEndpoint, `url={receiver}&format=json`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/webhooks/:id/test", webhookEndpoint, ``, adminPages + "admins=200 othermember=404"},
	{"POST", "/admin/webhooks/:id/rotate-secret", webhookEndpoint, `confirm=yes`, adminPages + "admins=200 othermember=404"},
	{"POST", "/admin/webhooks/:id/enabled", webhookEndpoint, `enabled=false`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/webhooks/:id/recover", webhookEndpoint, `since=2020-01-01T00:00:00Z`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/webhooks/:id/delete", webhookEndpoint, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/deliveries/:id/resend", failedDelivery, ``, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/rules", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/rules", noPage, `name={unique}&kind=approval&requiredApprovals=2`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/rules/:id/enabled", disabledRule, `enabled=true`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/rules/:id/delete", disabledRule, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/actions", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/actions", noPage, `name={unique}&inputSchema=%7B%22type%22%3A%22object%22%7D`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/actions/:id/delete", anAction, `confirm=yes`, adminPages + "admins=303 othermember=404"},
	{"GET", "/admin/slack", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/slack", noPage, `channel=C0123ABCD`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/slack/disconnect", noPage, `confirm=yes`, adminPages + "admins=303 othermember=303"},
	{"GET", "/admin/model-screen", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/model-screen", noPage, `url=http%3A%2F%2F127.0.0.1%3A9%2Fv1%2Fchat%2Fcompletions&model=m1`, adminPages + "admins=303 othermember=303"},
	{"POST", "/admin/model-screen/off", noPage, `confirm=yes`, adminPages + "admins=303 othermember=303"},
	// Kept on (yes), as the rows granting Cy's mandates need it.
	{"POST", "/admin/mandate-granting", noPage, `membersMayGrant=yes`, adminPages + "admins=303 othermember=303"},
	{"GET", "/admin/held-versions", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"GET", "/admin/system", noPage, ``, adminPages + "admins=200 othermember=200"},
	{"POST", "/admin/held-versions/:id/release", heldVersion, `submission={unique}`, adminPages + "admins=303 othermember=404"},
	{"POST", "/admin/held-versions/:id/decline", heldVersion, `submission={unique}`, adminPages + "admins=303 othermember=404"},

	// The Temporal UI's codec endpoint takes JSON without a form token;
	// only the instance's operators (here Ada) decode.
	{"OPTIONS", web.CodecPath + "/decode", noPage, ``, "anon=204 members=204 guest=204 othermember=204"},
	{"POST", web.CodecPath + "/decode", noPage, `{"payloads":[]}`, "anon=401 owner=200 administrator=403 member=403 guest=403 othermember=403"},
}

// adminPages is what every admin page answers to those who may not use
// them: signed out, the sign-in page; a member or a guest, 403.
const adminPages = "anon=303 member=403 guest=403 "

type pageRow struct {
	method, path string
	res          pageResource
	form, want   string
}

func (r pageRow) name() string { return r.method + " " + r.path }

// pageResource is what a row's path parameters (and form) name.
type pageResource int

const (
	noPage pageResource = iota
	// pendingApproval was requested by an agent, low risk, with Cy its
	// only approver; approvalLink is one with Cy's emailed link (:token),
	// forgedLink one with a token nobody was given.
	pendingApproval
	approvalLink
	forgedLink
	// openCollection was requested by an agent, with Cy its only
	// respondent and one number question, q1.
	openCollection
	// openReview is of a sharedReport, with Cy its only reviewer.
	openReview
	// openThread is a thread an agent opened on a sharedReport;
	// reportWithImage is a sharedReport with a comment image (:report,
	// :sha).
	openThread
	reportWithImage
	// agentReport was published by an agent and is shared with nobody;
	// sharedReport is shared with everyone; memberReport was published by
	// Cy and is shared with nobody. Each fills *slug and :key.
	agentReport
	sharedReport
	memberReport
	// guestReport was published by an agent and is shared with Gail, the
	// guest, alone.
	guestReport
	// heldVersion is version 1 of a report the publish scan held.
	heldVersion
	webhookEndpoint
	failedDelivery
	disabledRule
	anAction
	aTeam
	aGuest
	anAgentKey
	plainMember
	// anOwner is a second owner.
	anOwner
	// cyPush is Cy's browser's push subscription ({endpoint}).
	cyPush
	// gateApproval is a low-risk approval the gate raised for the agent
	// key, with Cy its only approver. bobMandate is a mandate Bob granted;
	// cyMandate one Cy granted.
	gateApproval
	bobMandate
	cyMandate
	// cyOwnToken is a member token Cy minted for herself.
	cyOwnToken
	// signInLink is a fresh sign-in link of Ada's ({token}); ownSession a
	// fresh session of the principal's. Both are sent from a browser of
	// their own, so the principal's stays as it is.
	signInLink
	ownSession
)

// pagePrincipals are the matrix's columns.
var pagePrincipals = []string{"anon", "owner", "administrator", "member", "guest", "othermember"}

var pageGroups = map[string][]string{
	"members": {"owner", "administrator", "member"},
	"admins":  {"owner", "administrator"},
}

// parsePageWant reads a row's want; every principal must be named once (a
// principal named on its own overrides its group).
func parsePageWant(s string) (map[string]testenv.Outcome, error) {
	return testenv.ParseWant(s, pagePrincipals, pageGroups)
}

// pageParam is a path parameter, gin's :name or *name.
var pageParam = regexp.MustCompile(`[:*][A-Za-z]+`)

// fullPages are the pages with every optional part on: single sign-on,
// the codec endpoint, reports, reviews and comments.
func fullPagesDeps(d *web.Deps, oidc *web.OIDCSettings) {
	d.OIDC = oidc
	d.Codec = &web.CodecSettings{UIOrigin: "http://temporal-ui.test", Operators: []string{"ada@example.com"},
		Decode: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"payloads":[]}`))
		})}
}

// TestPagesAuthzMatrixCoversEveryRoute fails when the pages serve a route
// that has no row in pagesMatrix, when a row names a route they do not
// serve, or when a row cannot be read.
func TestPagesAuthzMatrixCoversEveryRoute(t *testing.T) {
	t.Parallel()
	store := models.NewStore(testenv.OpenDB(t, "sqlite"), testenv.Keys())
	deps := web.Deps{BaseURL: "http://assent.test", Services: app.Build(app.Deps{Store: store, BaseURL: "http://assent.test"}).Web()}
	fullPagesDeps(&deps, &web.OIDCSettings{Issuer: "http://127.0.0.1:1", ClientID: "c", ClientSecret: "s"})
	engine := gin.New()
	web.New(deps).Mount(engine)

	rows := map[string]bool{}
	for _, row := range pagesMatrix {
		rows[row.name()] = true
		_, err := parsePageWant(row.want)
		assert.NoError(t, err, row.name())
		if (row.res == noPage) != !pageParam.MatchString(row.path) && row.res != signInLink && row.res != ownSession && row.res != cyPush {
			t.Errorf("%s: a path with a parameter needs a resource, and only such a path", row.name())
		}
	}
	var served []string
	for _, r := range engine.Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	testenv.CheckCoverage(t, served, rows, "pagesMatrix (web/authz_pages_test.go)")
}

// TestPagesAuthzMatrix sends every row's request as every principal and
// checks the status; another organisation's visitor must get the same
// answer for this organisation's real ids as for ids that do not exist,
// and no 2xx of theirs may carry this organisation's ids.
func TestPagesAuthzMatrix(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		env := newPagesEnv(t, db)
		for _, row := range pagesMatrix {
			name := row.name()
			if row.res != noPage {
				name += " " + resourceNames[row.res]
			}
			if row.method == http.MethodPost && strings.HasPrefix(row.form, "action=") {
				name += " " + strings.SplitN(row.form, "&", 2)[0]
			}
			t.Run(name, func(t *testing.T) {
				want, err := parsePageWant(row.want)
				require.NoError(t, err)
				for _, p := range pagePrincipals {
					env.checkCell(t, row, p, want[p].Fresh)
				}
			})
		}
	})
}

var resourceNames = map[pageResource]string{
	pendingApproval: "pending", approvalLink: "link", forgedLink: "forged link", openCollection: "open",
	openReview: "open", openThread: "open", reportWithImage: "image", agentReport: "agent's", sharedReport: "shared",
	memberReport: "member's", guestReport: "guest's", heldVersion: "held", webhookEndpoint: "endpoint", failedDelivery: "failed",
	disabledRule: "disabled", anAction: "action", aTeam: "team", aGuest: "guest", anAgentKey: "key",
	plainMember: "member", anOwner: "owner", cyPush: "Cy's", signInLink: "fresh", ownSession: "own session",
	gateApproval: "gate's", bobMandate: "Bob's", cyMandate: "Cy's", cyOwnToken: "Cy's token",
}

// pagesEnv is the API and the pages on one engine, the report hosts
// beside them, with Temporal and the worker behind: the API's keys make
// the resources, the principals' browsers visit the pages.
type pagesEnv struct {
	*site
	ctx                context.Context
	agentKey, adminKey string
	cyToken, bobToken  string
	cy                 *models.Member
	receiver           string
	push               *pushtest.Service
	emails             map[string]string
	browsers           map[string]*browser
	csrf               map[string]string
	// kept are the resources GET rows share, made once.
	kept map[pageResource]pageTarget
	// ours are ids of the first organisation, which another's visitor
	// must never see.
	ours   []string
	serial atomic.Int64
}

func newPagesEnv(t *testing.T, db *gorm.DB) *pagesEnv {
	t.Helper()
	ctx := context.Background()
	tc := temporalenv.Client(t)
	store := models.NewStore(db, testenv.Keys())
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	blobs, err := blobstore.Open(ctx, "", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { blobs.Close() })
	sc, err := scanner()
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	policy := netguard.DevLoopback
	svc := app.Build(app.Deps{Store: store, Temporal: tc, Blobs: blobs, Scanner: sc, Logger: quiet, BaseURL: srv.URL, NetPolicy: policy})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	rs, err := reportsite.New(reportsite.Deps{Reports: svc.Reports, Blobs: blobs, AppURL: srv.URL, Domain: "localhost:" + port, Logger: quiet})
	require.NoError(t, err)
	s := &site{store: store, mailbox: mail.NewMailbox(0), db: db, url: srv.URL, services: svc}
	deps := web.Deps{Mailer: s.mailbox, BaseURL: srv.URL, Logger: quiet, Services: svc.Web(), Site: rs}
	fullPagesDeps(&deps, newIdentityProvider(t).settings("SSO"))
	s.pages = web.New(deps)
	handler = rs.Route(api.New(api.Deps{Logger: quiet, BaseURL: srv.URL, Mount: s.pages.Mount,
		Services: svc.API()}))
	s.transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	temporalenv.Run(t, tc, worker.Deps{Store: store, BaseURL: srv.URL, Mailer: s.mailbox, NetPolicy: policy})

	e := &pagesEnv{site: s, ctx: ctx, push: pushtest.New(t), browsers: map[string]*browser{}, csrf: map[string]string{},
		kept: map[pageResource]pageTarget{},
		emails: map[string]string{"owner": "ada@example.com", "administrator": "bob@example.com", "member": "cy@example.com",
			"guest": "gail@partner.example", "othermember": "olga@other.example"}}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(receiver.Close)
	e.receiver = receiver.URL + "/hook"

	s.org, err = store.CreateOrganization(ctx, "Acme & Co", "")
	require.NoError(t, err)
	// Members may grant mandates here, so that Cy may grant and revoke one.
	_, err = store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{Plan: new(models.PlanTeam), MembersMayGrantMandates: new(true)})
	require.NoError(t, err)
	s.ada, err = store.CreateMember(ctx, s.org.ID, "ada@example.com", "Ada", models.RoleOwner)
	require.NoError(t, err)
	bob, err := store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", models.RoleAdmin)
	require.NoError(t, err)
	e.cy, err = store.CreateMember(ctx, s.org.ID, "cy@example.com", "Cy", models.RoleMember)
	require.NoError(t, err)
	guest, _, err := store.CreateGuest(ctx, s.org.ID, "gail@partner.example", "Gail")
	require.NoError(t, err)
	_, e.agentKey, err = store.CreateKey(ctx, s.org.ID, "agent", models.KeyAgent, scopes.All)
	require.NoError(t, err)
	_, e.adminKey, err = store.CreateKey(ctx, s.org.ID, "admin", models.KeyAdmin, nil)
	require.NoError(t, err)
	_, e.cyToken, err = store.CreateMemberToken(ctx, s.org.ID, e.cy.ID)
	require.NoError(t, err)
	_, e.bobToken, err = store.CreateMemberToken(ctx, s.org.ID, bob.ID)
	require.NoError(t, err)
	other, err := store.CreateOrganization(ctx, "Other Ltd", "")
	require.NoError(t, err)
	_, err = store.CreateMember(ctx, other.ID, "olga@other.example", "Olga", models.RoleOwner)
	require.NoError(t, err)
	e.ours = append(e.ours, s.org.ID, s.ada.ID, bob.ID, e.cy.ID, guest.ID)

	for _, p := range pagePrincipals {
		e.browsers[p], e.csrf[p] = e.visitor(t, p)
	}
	return e
}

// visitor is a new browser of principal p and the CSRF token its forms
// carry.
func (e *pagesEnv) visitor(t *testing.T, p string) (*browser, string) {
	t.Helper()
	b := e.browser(t)
	if p == "anon" {
		form := b.get("/signin")
		require.Equal(t, http.StatusOK, form.status, form.body)
		return b, form.csrf(t)
	}
	return b, b.signIn(e.site, e.emails[p])
}

func (e *pagesEnv) unique() string { return fmt.Sprintf("u%d", e.serial.Add(1)) }

// apiCall sends a JSON request to the API with key and decodes the answer.
func (e *pagesEnv) apiCall(t *testing.T, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Transport: e.transport}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out
}

// create201 posts body to the API as key and returns the new resource.
func (e *pagesEnv) create201(t *testing.T, key, path, body string) map[string]any {
	t.Helper()
	status, out := e.apiCall(t, "POST", path, key, body)
	require.Equal(t, 201, status, "%s: %v", path, out)
	e.ours = append(e.ours, out["id"].(string))
	return out
}

// pageTarget is one request of a row: its path parameters and form
// values, made fresh.
type pageTarget struct {
	params map[string]string
	vars   map[string]string
}

// reportTarget publishes a report as key with body and names it in the
// path (*slug and :key).
func (e *pagesEnv) reportTarget(t *testing.T, key, body string) pageTarget {
	t.Helper()
	r := e.create201(t, key, "/api/v1/reports", body)
	got, err := e.store.GetReport(e.ctx, e.org.ID, r["id"].(string))
	require.NoError(t, err)
	e.ours = append(e.ours, got.Key, got.Slug)
	return pageTarget{params: map[string]string{"*slug": "/" + got.Slug, ":key": got.Key}, vars: map[string]string{"{report}": got.ID}}
}

// tinyPNG is a 1×1 PNG, base64, for comment images.
const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

const everyoneReads = `{"title":"Q3","content":"<h1>Q3</h1>","audience":["everyone"]}`

// fresh makes what one call of row needs; a GET's resource is made once.
func (e *pagesEnv) fresh(t *testing.T, row pageRow) pageTarget {
	t.Helper()
	if row.method == http.MethodGet {
		if tg, ok := e.kept[row.res]; ok {
			return tg
		}
		tg := e.make(t, row.res)
		e.kept[row.res] = tg
		return tg
	}
	return e.make(t, row.res)
}

func (e *pagesEnv) make(t *testing.T, res pageResource) pageTarget {
	t.Helper()
	tg := pageTarget{params: map[string]string{}, vars: map[string]string{}}
	id := func(m map[string]any) { tg.params[":id"] = m["id"].(string) }
	switch res {
	case noPage, ownSession:
	case pendingApproval, approvalLink, forgedLink:
		id(e.create201(t, e.agentKey, "/api/v1/approvals", `{"title":"Refund","risk":"low","approvers":["cy@example.com"]}`))
		tg.params[":decision"] = "approve"
		tg.params[":token"] = "forged-" + models.NewToken()
		if res == approvalLink {
			a, err := approvals.Records(e.store).Get(e.ctx, e.org.ID, tg.params[":id"])
			require.NoError(t, err)
			tg.params[":token"], err = e.store.CreateDecisionLink(e.ctx, a.OrganizationID, a.ID, a.ExpiresAt, e.cy.ID)
			require.NoError(t, err)
		}
	case openCollection:
		id(e.create201(t, e.agentKey, "/api/v1/collections", `{"title":"Facts","questions":[{"prompt":"Budget?","kind":"number"}],"respondents":["cy@example.com"]}`))
	case openReview:
		report := e.create201(t, e.agentKey, "/api/v1/reports", everyoneReads)["id"].(string)
		id(e.create201(t, e.agentKey, "/api/v1/reviews", `{"title":"Check","reportId":"`+report+`","reviewers":["cy@example.com"]}`))
	case openThread, reportWithImage:
		report := e.create201(t, e.agentKey, "/api/v1/reports", everyoneReads)["id"].(string)
		body := `{"body":"First."}`
		if res == reportWithImage {
			body = `{"body":"See this.","images":[{"data":"` + tinyPNG + `"}]}`
		}
		thread := e.create201(t, e.agentKey, "/api/v1/reports/"+report+"/comments", body)
		id(thread)
		if res == reportWithImage {
			comment := thread["comments"].([]any)[0].(map[string]any)
			tg.params[":report"] = report
			tg.params[":sha"] = comment["images"].([]any)[0].(map[string]any)["sha256"].(string)
		}
	case agentReport:
		return e.reportTarget(t, e.agentKey, `{"title":"Q3","content":"<h1>Q3</h1>"}`)
	case sharedReport:
		return e.reportTarget(t, e.agentKey, everyoneReads)
	case guestReport:
		return e.reportTarget(t, e.agentKey, `{"title":"For Gail","content":"<h1>G</h1>","audience":["gail@partner.example"]}`)
	case memberReport:
		return e.reportTarget(t, e.cyToken, `{"title":"Cy's","content":"<h1>Cy</h1>"}`)
	case heldVersion:
		r := e.create201(t, e.agentKey, "/api/v1/reports", `{"title":"Held","content":"<base href=\"https://elsewhere.example/\">"}`)
		tg.params[":id"] = r["version"].(map[string]any)["id"].(string)
		e.ours = append(e.ours, tg.params[":id"])
	case webhookEndpoint, failedDelivery:
		id(e.create201(t, e.adminKey, "/api/v1/admin/webhooks", `{"url":"`+e.receiver+`"}`))
		if res == failedDelivery {
			tg.params[":id"] = e.failedDelivery(t, tg.params[":id"])
		}
	case disabledRule:
		id(e.create201(t, e.adminKey, "/api/v1/admin/rules", `{"name":"`+e.unique()+`","kind":"approval","requiredApprovals":2,"enabled":false}`))
	case anAction:
		id(e.create201(t, e.adminKey, "/api/v1/admin/actions", `{"name":"`+e.unique()+`","inputSchema":{"type":"object"}}`))
	case aTeam:
		id(e.create201(t, e.adminKey, "/api/v1/admin/teams", `{"name":"`+e.unique()+`","kind":"team"}`))
	case aGuest:
		id(e.create201(t, e.adminKey, "/api/v1/admin/guests", `{"email":"`+e.unique()+`@partner.example"}`))
	case anAgentKey:
		id(e.create201(t, e.adminKey, "/api/v1/admin/keys", `{"name":"doomed","kind":"agent","scopes":["approvals:read"]}`))
	case cyOwnToken:
		id(e.create201(t, e.cyToken, "/api/v1/me/tokens", `{"scopes":["approvals:read"]}`))
	case plainMember, anOwner:
		role := map[pageResource]string{plainMember: models.RoleMember, anOwner: models.RoleOwner}[res]
		id(e.create201(t, e.adminKey, "/api/v1/admin/members", `{"email":"`+e.unique()+`@example.com","role":"`+role+`"}`))
	case cyPush:
		sub := e.push.Subscribe(t)
		r := e.browsers["member"].post("/push/subscriptions", pushForm(e.csrf["member"], sub))
		require.Equal(t, http.StatusNoContent, r.status, r.body)
		tg.vars["{endpoint}"] = sub.Endpoint
	case gateApproval:
		name := e.gateAction(t, `"policy":[{"name":"ask","outcome":"approval","risk":"low","approvers":["cy@example.com"]}]`)
		status, out := e.apiCall(t, "POST", "/api/v1/gate", e.agentKey, `{"action":"`+name+`","input":{"amount":5}}`)
		require.Equal(t, 202, status, "%v", out)
		id(out["approval"].(map[string]any))
		e.ours = append(e.ours, tg.params[":id"])
	case bobMandate, cyMandate:
		// With no rule holding, the owners and administrators decide.
		token, policy := e.bobToken, ``
		if res == cyMandate {
			token, policy = e.cyToken, `"policy":[{"name":"ask","outcome":"approval","risk":"low","approvers":["cy@example.com"]}]`
		}
		name := e.gateAction(t, policy)
		id(e.create201(t, token, "/api/v1/mandates", `{"action":"`+name+`","expiresAt":"`+
			time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339)+`","budget":{"count":5,"window":"day"}}`))
	case signInLink:
		tg.vars["{token}"] = e.link(t, "ada@example.com")
	default:
		t.Fatalf("unknown resource %d", res)
	}
	return tg
}

// gateAction registers an action with a fresh name, an object input and
// policy (JSON members, or none), and returns its name.
func (e *pagesEnv) gateAction(t *testing.T, policy string) string {
	t.Helper()
	name := e.unique()
	if policy != "" {
		policy = "," + policy
	}
	e.create201(t, e.adminKey, "/api/v1/admin/actions", `{"name":"`+name+`","inputSchema":{"type":"object"}`+policy+`}`)
	return name
}

// failedDelivery records an event and its failed delivery to endpoint.
func (e *pagesEnv) failedDelivery(t *testing.T, endpoint string) string {
	t.Helper()
	now := models.Now()
	ev := &models.Event{ID: ids.New(ids.Event), OrganizationID: e.org.ID, Kind: "approval.requested", SubjectType: "approval",
		SubjectID: ids.New(ids.Approval), Data: models.RawJSON(`{}`), CreatedAt: now, DispatchedAt: &now}
	d := &models.Delivery{ID: ids.New(ids.Delivery), OrganizationID: e.org.ID, EventID: ev.ID, Target: models.TargetWebhook,
		EndpointID: &endpoint, Status: models.DeliveryFailed, Attempts: 1, LastStatusCode: 500, LastError: "HTTP 500",
		StartedAt: &now, CreatedAt: now, UpdatedAt: now}
	db := e.db.WithContext(e.ctx)
	require.NoError(t, db.Create(ev).Error)
	require.NoError(t, db.Create(d).Error)
	e.ours = append(e.ours, ev.ID, d.ID)
	return d.ID
}

// call sends row's request for tg as principal p.
func (e *pagesEnv) call(t *testing.T, row pageRow, p string, tg pageTarget) page {
	t.Helper()
	b, csrf := e.browsers[p], e.csrf[p]
	if row.res == ownSession || row.res == signInLink && row.method == http.MethodPost {
		b, csrf = e.visitor(t, p)
	}
	path := pageParam.ReplaceAllStringFunc(row.path, func(name string) string {
		v, ok := tg.params[name]
		require.True(t, ok, "%s: nothing fills %s", row.name(), name)
		return strings.TrimPrefix(v, "/")
	})
	if strings.HasPrefix(row.path, web.CodecPath) {
		req, err := http.NewRequest(row.method, e.url+path, strings.NewReader(row.form))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		return b.do(req)
	}
	raw := row.form
	vars := map[string]string{"{unique}": e.unique(), "{receiver}": e.receiver,
		"{until}": time.Now().Add(24 * time.Hour).UTC().Format("2006-01-02T15:04")}
	if strings.Contains(raw, "{report}") {
		vars["{report}"] = e.make(t, sharedReport).vars["{report}"]
	}
	if strings.Contains(raw, "{newMember}") {
		vars["{newMember}"] = e.unique() + "@example.com"
		e.create201(t, e.adminKey, "/api/v1/admin/members", `{"email":"`+vars["{newMember}"]+`"}`)
	}
	if strings.Contains(raw, "{p256dh}") {
		sub := e.push.Subscribe(t)
		vars["{endpoint}"], vars["{p256dh}"], vars["{auth}"] = sub.Endpoint, sub.P256dh, sub.Auth
	}
	for k, v := range tg.vars {
		vars[k] = v
	}
	for k, v := range vars {
		raw = strings.ReplaceAll(raw, k, url.QueryEscape(v))
	}
	form, err := url.ParseQuery(raw)
	require.NoError(t, err, row.form)
	if row.method == http.MethodGet {
		if len(form) > 0 {
			path += "?" + form.Encode()
		}
		return b.get(path)
	}
	form.Set("csrf", csrf)
	return b.post(path, form)
}

// missing is tg with each of its ids replaced by one that does not exist.
func missing(tg pageTarget) pageTarget {
	out := pageTarget{params: map[string]string{}, vars: tg.vars}
	for k, v := range tg.params {
		switch k {
		case ":decision":
		case "*slug":
			v = "/no-such-report"
		case ":key":
			v = "k" + strings.Repeat("0", len(v)-1)
		case ":sha", ":token":
			v = strings.Repeat("0", len(v))
		default:
			prefix, _, _ := strings.Cut(v, "_")
			v = prefix + "_0000000000000000000000"
		}
		out.params[k] = v
	}
	return out
}

// checkCell sends row's request as p on its resource.
func (e *pagesEnv) checkCell(t *testing.T, row pageRow, p string, want int) {
	t.Helper()
	tg := e.fresh(t, row)
	r := e.call(t, row, p, tg)
	assert.Equal(t, want, r.status, "as %s: %s", p, excerpt(r))
	if p == "anon" && r.status == http.StatusSeeOther && row.res != signInLink && row.res != approvalLink {
		assert.True(t, strings.HasPrefix(r.header.Get("Location"), "/signin"), "signed out, to the sign-in page, not %s", r.header.Get("Location"))
	}
	if row.res == cyPush && p != "member" {
		// Nobody else turns Cy's browser off or learns it is on.
		on, err := e.store.PushSubscribed(e.ctx, &models.Person{Organization: e.org, Member: e.cy}, tg.vars["{endpoint}"])
		require.NoError(t, err)
		assert.True(t, on, "as %s: Cy's subscription was turned off", p)
		assert.NotContains(t, r.body, `"subscribed":true`, "as %s", p)
	}
	// The emailed link is the credential, not the session: whoever holds
	// it opens it.
	if p != "othermember" || row.res == approvalLink {
		return
	}
	if r.status < 300 {
		for _, id := range e.ours {
			if strings.Contains(r.body, id) {
				t.Errorf("as %s: the answer carries the first organisation's %s: %s", p, id, excerpt(r))
			}
		}
	}
	if len(tg.params) > 0 {
		m := e.call(t, row, p, missing(tg))
		assert.Equal(t, m.status, r.status, "as %s: a real foreign id is answered unlike a missing one: %s", p, excerpt(r))
	}
}

// excerpt is what a failed cell shows of a page: its problem, or its start.
func excerpt(p page) string {
	if loc := p.header.Get("Location"); loc != "" {
		return "→ " + loc
	}
	if m := regexp.MustCompile(`(?s)<main[^>]*>(.*?)</main>`).FindStringSubmatch(p.body); m != nil {
		return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[1], " ")), " ")
	}
	if len(p.body) > 300 {
		return p.body[:300]
	}
	return p.body
}
