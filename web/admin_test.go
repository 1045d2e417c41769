package web_test

import (
	"cmp"
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/accounts"
	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/events"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/netguard"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/webhook"
	"github.com/assent-hq/assent/web"
	"github.com/assent-hq/assent/webhooks"
)

// adminSite is a site whose first member, Ada, is the owner. CreateMember
// makes plain members unless told, so she is promoted here.
func adminSite(t *testing.T, db *gorm.DB) *site { return adminSiteWith(t, db, app.Deps{}) }

// adminSiteWith is adminSite with services built from svc.
func adminSiteWith(t *testing.T, db *gorm.DB, svc app.Deps) *site {
	t.Helper()
	s := newSiteWith(t, models.NewStore(db, testenv.Keys()), web.Deps{}, svc)
	s.ada = testenv.ChangeMember(t, s.store, s.org.ID, s.ada.ID, func(m *models.Member) { m.Role = models.RoleOwner })
	return s
}

// member adds a member of s's organisation with role.
func (s *site) member(t *testing.T, email, role string) *models.Member {
	t.Helper()
	m, err := s.store.CreateMember(context.Background(), s.org.ID, email, strings.Split(email, "@")[0], role)
	require.NoError(t, err)
	return m
}

// otherOrg is a second organisation with a member, for checks that its
// records stay out of reach.
func (s *site) otherOrg(t *testing.T) *models.Organization {
	t.Helper()
	o, err := s.store.CreateOrganization(context.Background(), "Other Ltd", "")
	require.NoError(t, err)
	return o
}

// problem is the text of the page's problem box.
var problemBox = regexp.MustCompile(`(?s)<p class="problem" role="alert" id="problem">(.*?)</p>`)

func problemOf(t *testing.T, p page) string {
	t.Helper()
	m := problemBox.FindStringSubmatch(p.body)
	require.NotNil(t, m, "no problem shown in:\n%s", p.body)
	return html.UnescapeString(m[1])
}

func TestAdminPagesAreForOwnersAndAdministrators(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		s.member(t, "bob@example.com", models.RoleMember)
		s.member(t, "cy@example.com", models.RoleAdmin)
		_, _, err := s.store.CreateGuest(context.Background(), s.org.ID, "gus@example.com", "")
		require.NoError(t, err)
		paths := []string{"/admin", "/admin/members", "/admin/teams", "/admin/guests", "/admin/keys", "/admin/webhooks", "/admin/rules"}

		// Signed out: to sign-in, and back here after.
		out := s.browser(t)
		r := out.get("/admin/keys")
		assert.Equal(t, http.StatusSeeOther, r.status)
		assert.Equal(t, "/signin?next=%2Fadmin%2Fkeys", r.header.Get("Location"))

		for _, who := range []string{"bob@example.com", "gus@example.com"} {
			b := s.browser(t)
			csrf := b.signIn(s, who)
			assert.NotContains(t, b.get("/inbox").body, `href="/admin"`, "%s sees no admin link", who)
			for _, path := range paths {
				r := b.get(path)
				assert.Equal(t, http.StatusForbidden, r.status, "%s GET %s", who, path)
				assert.Contains(t, r.body, "Only the organisation&#39;s owners and administrators")
			}
			r := b.post("/admin/members", url.Values{"csrf": {csrf}, "email": {"eve@example.com"}})
			assert.Equal(t, http.StatusForbidden, r.status, who)
		}
		rows, _, err := s.store.ListMembers(context.Background(), s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Len(t, rows, 3, "nobody was added")

		for _, who := range []string{"ada@example.com", "cy@example.com"} {
			b := s.browser(t)
			b.signIn(s, who)
			assert.Contains(t, b.get("/inbox").body, `<a href="/admin">Admin</a>`)
			for _, path := range paths {
				r := b.get(path)
				require.Equal(t, http.StatusOK, r.status, "%s GET %s: %s", who, path, r.body)
				assert.Contains(t, r.body, `aria-label="Admin sections"`)
				assert.Contains(t, r.header.Get("Content-Security-Policy"), "default-src 'none'")
			}
		}
	})
}

func TestAdminFormsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		for _, form := range []url.Values{
			{"email": {"eve@example.com"}},
			{"email": {"eve@example.com"}, "csrf": {"wrong"}},
		} {
			r := b.post("/admin/members", form)
			assert.Equal(t, http.StatusForbidden, r.status)
			assert.Contains(t, r.body, "This form has expired")
		}
		r := b.post("/admin/keys", url.Values{"name": {"sneaky"}, "scopes": {scopes.ApprovalsRead}})
		assert.Equal(t, http.StatusForbidden, r.status)
		r = b.post("/admin/webhooks", url.Values{"url": {"https://receiver.example/"}, "format": {"json"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		keys, _, err := s.store.ListKeys(context.Background(), s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, keys)
		assert.NotContains(t, b.get("/admin/members").body, "eve@example.com")

		// Every admin form carries the token.
		ep, err := s.store.CreateWebhookEndpoint(context.Background(), s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/",
			Format: models.FormatJSON, Enabled: true, Secret: "whsec_x"})
		require.NoError(t, err)
		for _, path := range []string{"/admin/members", "/admin/teams", "/admin/guests", "/admin/keys", "/admin/rules", "/admin/webhooks", "/admin/webhooks/" + ep.ID} {
			p := b.get(path)
			forms := strings.Count(p.body, `method="post"`)
			assert.Equal(t, forms, strings.Count(p.body, `name="csrf" value="`+csrf+`"`), path)
		}
	})
}

func TestAdminManagesMembers(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		page := b.get("/admin/members")
		require.Equal(t, http.StatusOK, page.status)
		assert.Contains(t, page.body, "<caption>Members of the organisation</caption>")
		assert.Contains(t, page.body, `<th scope="col">Role</th>`)
		assert.Contains(t, page.body, `<label for="email">Email address</label>`)

		// A bad address names the field and keeps what was typed.
		r := b.post("/admin/members", url.Values{"csrf": {csrf}, "email": {"not-an-address"}, "name": {"Bob <Builder>"}, "role": {"member"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Email address must be an email address, such as name@example.com.", problemOf(t, r), "named by its label")
		assert.Contains(t, r.body, `value="not-an-address" aria-invalid="true" aria-describedby="problem"`)
		assert.Contains(t, r.body, `value="Bob &lt;Builder&gt;"`)

		r = b.post("/admin/members", url.Values{"csrf": {csrf}, "email": {"Bob@Example.com"}, "name": {"Bob"}, "role": {"member"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/members?done=member-added", r.header.Get("Location"))
		list := b.get(r.header.Get("Location"))
		assert.Contains(t, list.body, "The member was added.")
		assert.Contains(t, list.body, "bob@example.com")
		r = b.post("/admin/members", url.Values{"csrf": {csrf}, "email": {"bob@example.com"}, "role": {"member"}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), "already exists")

		rows, _, err := s.store.ListMembers(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		bob := rows[0]
		require.Equal(t, "bob@example.com", bob.Email)

		// Change a role.
		r = b.post("/admin/members/"+bob.ID+"/role", url.Values{"csrf": {csrf}, "role": {"admin"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := s.store.GetMember(ctx, s.org.ID, bob.ID)
		require.NoError(t, err)
		assert.Equal(t, models.RoleAdmin, got.Role)
		r = b.post("/admin/members/"+bob.ID+"/role", url.Values{"csrf": {csrf}, "role": {"emperor"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Role must be one of: owner, admin, member.", problemOf(t, r))

		// The last owner cannot be demoted or deactivated, and the page says why.
		for _, form := range []url.Values{{"role": {"member"}}, {"active": {"false"}}} {
			form.Set("csrf", csrf)
			action := "/role"
			if form.Has("active") {
				action = "/active"
			}
			r = b.post("/admin/members/"+s.ada.ID+action, form)
			assert.Equal(t, http.StatusConflict, r.status)
			assert.Equal(t, "ada@example.com is the last active owner; make another member owner first.", problemOf(t, r))
			if action == "/role" {
				// The refused row keeps the role chosen, marked; the add
				// form's Role is not blamed.
				assert.Contains(t, r.body, `<select id="role-`+s.ada.ID+`" name="role" aria-invalid="true" aria-describedby="problem"><option value="member" selected>`)
				assert.NotContains(t, r.body, `<select id="role" name="role" aria-invalid`)
			}
		}
		got, err = s.store.GetMember(ctx, s.org.ID, s.ada.ID)
		require.NoError(t, err)
		assert.Equal(t, models.RoleOwner, got.Role)
		assert.True(t, got.Active)

		// Deactivate and reactivate.
		r = b.post("/admin/members/"+bob.ID+"/active", url.Values{"csrf": {csrf}, "active": {"false"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "Deactivated")
		got, _ = s.store.GetMember(ctx, s.org.ID, bob.ID)
		assert.False(t, got.Active)
		r = b.post("/admin/members/"+bob.ID+"/active", url.Values{"csrf": {csrf}, "active": {"true"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, _ = s.store.GetMember(ctx, s.org.ID, bob.ID)
		assert.True(t, got.Active)

		// An administrator who is not an owner cannot hand out or take away
		// ownership.
		bb := s.browser(t)
		bcsrf := bb.signIn(s, "bob@example.com")
		r = bb.post("/admin/members/"+bob.ID+"/role", url.Values{"csrf": {bcsrf}, "role": {"owner"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, problemOf(t, r), "Only an owner")
		r = bb.post("/admin/members/"+s.ada.ID+"/active", url.Values{"csrf": {bcsrf}, "active": {"false"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		r = bb.post("/admin/members", url.Values{"csrf": {bcsrf}, "email": {"own@example.com"}, "role": {"owner"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, `value="own@example.com"`)
		r = bb.post("/admin/members", url.Values{"csrf": {bcsrf}, "email": {"dee@example.com"}, "role": {"member"}})
		assert.Equal(t, http.StatusSeeOther, r.status, "administrators add members")

		// Another organisation's member is not found.
		other := s.otherOrg(t)
		foreign, err := s.store.CreateMember(ctx, other.ID, "zed@example.com", "", models.RoleOwner)
		require.NoError(t, err)
		r = b.post("/admin/members/"+foreign.ID+"/role", url.Values{"csrf": {csrf}, "role": {"member"}})
		assert.Equal(t, http.StatusNotFound, r.status)
		got, _ = s.store.GetMember(ctx, other.ID, foreign.ID)
		assert.Equal(t, models.RoleOwner, got.Role)
	})
}

func TestAdminTeamsAndGuests(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		s.member(t, "bob@example.com", models.RoleMember)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		r := b.post("/admin/teams", url.Values{"csrf": {csrf}, "name": {"Finance"}, "kind": {"team"}, "members": {"ada@example.com, nobody@example.com"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Unknown members: nobody@example.com.", problemOf(t, r))
		assert.Contains(t, r.body, ">ada@example.com, nobody@example.com</textarea>")
		r = b.post("/admin/teams", url.Values{"csrf": {csrf}, "name": {"Finance"}, "kind": {"team"}, "members": {"ada@example.com\nbob@example.com"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		teams := b.get(r.header.Get("Location"))
		assert.Contains(t, teams.body, "Finance")
		assert.Contains(t, teams.body, "Ada Lovelace, bob")
		r = b.post("/admin/teams", url.Values{"csrf": {csrf}, "name": {"Finance"}, "kind": {"group"}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), `a team named "Finance" already exists`)

		r = b.post("/admin/guests", url.Values{"csrf": {csrf}, "email": {"gus@example.com"}, "name": {"Gus"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/guests?done=guest-admitted", r.header.Get("Location"))
		assert.Contains(t, b.get("/admin/guests").body, "gus@example.com")
		r = b.post("/admin/guests", url.Values{"csrf": {csrf}, "email": {"gus@example.com"}})
		assert.Equal(t, "/admin/guests?done=guest-existed", r.header.Get("Location"))
		r = b.post("/admin/guests", url.Values{"csrf": {csrf}, "email": {"bob@example.com"}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Equal(t, "Email address: bob@example.com is a member, not a guest.", problemOf(t, r), "the message names the field by its label")
	})
}

var agentSecret = regexp.MustCompile(`asnt_agent_[a-z2-7]{20,}`)

func TestAdminKeysShowTheSecretOnce(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		page := b.get("/admin/keys")
		for _, sc := range scopes.All {
			assert.Contains(t, page.body, `name="scopes" value="`+sc+`"`)
		}
		r := b.post("/admin/keys", url.Values{"csrf": {csrf}, "name": {"billing agent"}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Scopes: an agent key needs at least one scope.", problemOf(t, r))
		assert.Contains(t, r.body, `value="billing agent"`)
		r = b.post("/admin/keys", url.Values{"csrf": {csrf}, "scopes": {scopes.ApprovalsRead}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Name is required.", problemOf(t, r))
		assert.Contains(t, r.body, `value="approvals:read" checked`, "ticked scopes stay ticked")

		created := b.post("/admin/keys", url.Values{"csrf": {csrf}, "name": {"billing agent"}, "scopes": {scopes.ApprovalsRead, scopes.ApprovalsWrite}})
		require.Equal(t, http.StatusCreated, created.status, created.body)
		secrets := agentSecret.FindAllString(created.body, -1)
		require.Len(t, secrets, 1, "the secret is on the page, once")
		secret := secrets[0]
		assert.Contains(t, created.body, "This is the only time it is shown")
		assert.Equal(t, "no-store", created.header.Get("Cache-Control"))

		p, err := accounts.New(s.store).Authenticate(ctx, secret)
		require.NoError(t, err, "the key works")
		assert.Equal(t, s.org.ID, p.Organization.ID)
		assert.Equal(t, models.KeyAgent, p.Key.Kind)
		assert.True(t, p.HasScope(scopes.ApprovalsWrite))
		assert.False(t, p.HasScope(scopes.ReportsShare))
		var issued models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", p.Key.ID).Take(&issued).Error)
		assert.Equal(t, s.ada.ID, issued.ActorID, "the audit trail names who issued it")
		assert.Equal(t, "agent key billing agent, scopes approvals:read, approvals:write", issued.Detail)

		for range 2 {
			list := b.get("/admin/keys")
			require.Equal(t, http.StatusOK, list.status)
			assert.NotContains(t, list.body, secret, "never shown again")
			assert.Empty(t, agentSecret.FindAllString(list.body, -1))
			assert.Contains(t, list.body, "<code>"+p.Key.Prefix+"…</code>")
			assert.Contains(t, list.body, "billing agent")
			assert.NotContains(t, list.body, "This is the only time it is shown")
		}

		// Revoking stops it at once.
		r = b.post("/admin/keys/"+p.Key.ID+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "Revoked <time")
		_, err = accounts.New(s.store).Authenticate(ctx, secret)
		assert.True(t, apperr.Is(err, apperr.Unauthorized), "revoked: %v", err)

		// Another organisation's key cannot be revoked from here.
		other := s.otherOrg(t)
		k, theirs, err := s.store.CreateKey(ctx, other.ID, "theirs", models.KeyAgent, []string{scopes.ApprovalsRead})
		require.NoError(t, err)
		r = b.post("/admin/keys/"+k.ID+"/revoke", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		assert.Equal(t, http.StatusNotFound, r.status)
		_, err = accounts.New(s.store).Authenticate(ctx, theirs)
		assert.NoError(t, err)
		assert.NotContains(t, b.get("/admin/keys").body, "theirs")
	})
}

// apiError posts body to the API at path with key and returns the error
// message it answers with.
func apiError(t *testing.T, store *models.Store, key, path, body string) (int, string) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test",
		Services: app.Build(app.Deps{Store: store, Logger: quiet, BaseURL: "http://assent.test"}).API()}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var env struct {
		Error struct{ Message string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
	return resp.StatusCode, env.Error.Message
}

func TestAdminRulesAreCheckedLikeTheAPI(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		_, adminKey, err := s.store.CreateKey(ctx, s.org.ID, "admin", models.KeyAdmin, nil)
		require.NoError(t, err)

		bad := "request.risk =="
		r := b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"big"}, "kind": {"approval"}, "requiredApprovals": {"2"}, "condition": {bad}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		status, want := apiError(t, s.store, adminKey, "/api/v1/admin/rules", `{"name":"big","kind":"approval","requiredApprovals":2,"condition":"request.risk =="}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, want, "the condition does not compile")
		assert.Equal(t, "T"+want[1:], problemOf(t, r), "the page and the API refuse alike, the page with a capital")
		assert.Contains(t, r.body, `>request.risk ==</textarea>`, "what was typed is kept")
		assert.Contains(t, r.body, `id="condition" name="condition" rows="3" maxlength="4000" class="mono" aria-invalid="true"`)

		for _, tc := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"name": {"a"}, "kind": {"approval"}}, "An approval rule needs “Approvals needed”, from 2 to 20."},
			{url.Values{"name": {"a"}, "kind": {"approval"}, "requiredApprovals": {"1"}}, "Approvals needed must be at least 2."},
			{url.Values{"name": {"a"}, "kind": {"approval"}, "requiredApprovals": {"two"}}, "Approvals needed must be a whole number."},
			{url.Values{"name": {"a"}, "kind": {"ethics"}, "principle": {"privacy"}}, "An ethics rule needs the concern approvers read first."},
			{url.Values{"name": {"a"}, "kind": {"restricted"}}, "A restricted-fields rule needs the fields it hides."},
			{url.Values{"name": {"a"}, "kind": {"magic"}}, "Kind must be one of: approval, ethics, restricted, sharing."},
		} {
			tc.form.Set("csrf", csrf)
			r := b.post("/admin/rules", tc.form)
			assert.Equal(t, http.StatusBadRequest, r.status, tc.want)
			assert.Equal(t, tc.want, problemOf(t, r))
		}

		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"big payments"}, "kind": {"approval"}, "requiredApprovals": {"2"},
			"condition": {"has(request.input.amount) && request.input.amount > 1000"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"bank details"}, "kind": {"restricted"}, "fields": {"iban, bic"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"no guests"}, "kind": {"sharing"}, "condition": {"request.risk == 'high'"}})
		assert.Equal(t, http.StatusBadRequest, r.status, "a sharing rule sees report and grant, not request")
		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"no guests"}, "kind": {"sharing"}, "condition": {"grant.kind == 'guest'"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		list := b.get("/admin/rules")
		assert.Contains(t, list.body, "Forbids these report grants")
		assert.Contains(t, list.body, "has(request.input.amount) &amp;&amp; request.input.amount &gt; 1000")
		assert.Contains(t, list.body, "Needs 2 approvals")
		assert.Contains(t, list.body, "Hides <code>iban</code>, <code>bic</code>")
		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"big payments"}, "kind": {"restricted"}, "fields": {"x"}})
		assert.Equal(t, http.StatusConflict, r.status)

		rules, _, err := s.store.ListRules(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, rules, 3)
		big := rules[2]
		require.Equal(t, "big payments", big.Name)
		assert.True(t, big.Enabled)
		assert.Equal(t, []string{"iban", "bic"}, []string(rules[1].Fields))

		r = b.post("/admin/rules/"+big.ID+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"false"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		enabled, err := s.store.EnabledRules(ctx, s.org.ID)
		require.NoError(t, err)
		assert.Len(t, enabled, 2)
		r = b.post("/admin/rules/"+big.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.NotContains(t, b.get("/admin/rules").body, "big payments")
		assert.Equal(t, http.StatusNotFound, b.post("/admin/rules/"+big.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).status)

		other := s.otherOrg(t)
		theirs := &models.Rule{OrganizationID: other.ID, Name: "theirs", Kind: "restricted", Fields: models.StringList{"x"}, Enabled: true}
		require.NoError(t, s.store.CreateRule(ctx, theirs))
		assert.Equal(t, http.StatusNotFound, b.post("/admin/rules/"+theirs.ID+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"false"}}).status)
		assert.Equal(t, http.StatusNotFound, b.post("/admin/rules/"+theirs.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).status)
	})
}

// failedDelivery stores an event and its delivery to ep that failed twice.
func (s *site) failedDelivery(t *testing.T, orgID string, ep *models.WebhookEndpoint) *models.Delivery {
	t.Helper()
	ctx := context.Background()
	now := models.Now()
	ev := models.Event{ID: ids.New(ids.Event), OrganizationID: orgID, Kind: events.ApprovalRequested,
		SubjectType: "approval", SubjectID: "apr_test", Data: models.RawJSON(`{"id":"apr_test"}`), CreatedAt: now, DispatchedAt: &now}
	require.NoError(t, s.db.Create(&ev).Error)
	d := &models.Delivery{ID: ids.New(ids.Delivery), OrganizationID: orgID, EventID: ev.ID, Target: models.TargetWebhook,
		EndpointID: &ep.ID, Status: models.DeliveryPending, StartedAt: &now, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.db.Create(d).Error)
	require.NoError(t, webhooks.Attempts{Store: s.store.DeliveryStore}.Record(ctx, d, models.AttemptResult{Attempt: 1, At: now, StatusCode: 503,
		Latency: 120 * time.Millisecond, Err: "the receiver answered 503"}))
	require.NoError(t, webhooks.Attempts{Store: s.store.DeliveryStore}.Record(ctx, d, models.AttemptResult{Attempt: 2, At: now.Add(time.Minute),
		Latency: 10 * time.Second, Err: "the receiver did not answer within the time allowed", Final: true}))
	return d
}

func TestAdminWebhookPages(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")

		slack, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://hooks.slack.com/services/T0/B0/sEcReTtOkEn",
			Format: models.FormatSlack, Enabled: true, Secret: "whsec_slack"})
		require.NoError(t, err)
		ep, err := s.store.CreateWebhookEndpoint(ctx, s.org.ID, models.NewWebhookEndpoint{URL: "https://receiver.example/hook",
			Format: models.FormatJSON, Events: []string{events.ApprovalRequested}, Enabled: true, Secret: "whsec_json"})
		require.NoError(t, err)
		d := s.failedDelivery(t, s.org.ID, ep)
		// The endpoint failed too often and was switched off.
		off := models.Now()
		require.NoError(t, db.Model(&models.WebhookEndpoint{}).Where("id = ?", ep.ID).
			Updates(map[string]any{"switched_off_at": off, "consecutive_failures": models.SwitchOffAfter}).Error)

		list := b.get("/admin/webhooks")
		require.Equal(t, http.StatusOK, list.status, list.body)
		assert.Contains(t, list.body, "https://hooks.slack.com/…", "a chat address is shown redacted")
		assert.NotContains(t, list.body, "sEcReTtOkEn")
		assert.NotContains(t, list.body, "whsec_")
		assert.Contains(t, list.body, `href="/admin/webhooks/`+slack.ID+`"`)
		assert.Contains(t, list.body, "https://receiver.example/hook")
		assert.Contains(t, list.body, `<span class="state state-off">switched off</span>`)
		assert.Contains(t, b.get("/admin").body, "Webhook endpoints switched off", "the overview points it out")

		page := b.get("/admin/webhooks/" + ep.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, `<h2 id="off-h">Switched off</h2>`)
		assert.Contains(t, page.body, "<dt>Failures in a row</dt><dd>20</dd>")
		assert.Contains(t, page.body, "<code>"+d.ID+"</code>")
		assert.Contains(t, page.body, "<code>approval.requested</code>")
		assert.Contains(t, page.body, `<span class="status status-failed">failed</span>`)
		assert.Contains(t, page.body, "Attempt 1: <time")
		assert.Contains(t, page.body, "HTTP 503 · 120 ms · the receiver answered 503")
		assert.Contains(t, page.body, "Attempt 2: <time")
		assert.Contains(t, page.body, "no answer · 10000 ms · the receiver did not answer within the time allowed")
		assert.Contains(t, page.body, `action="/admin/deliveries/`+d.ID+`/resend"`)
		filtered := b.get("/admin/webhooks/" + ep.ID + "?status=delivered")
		assert.NotContains(t, filtered.body, "<code>"+d.ID+"</code>")
		assert.Contains(t, filtered.body, "No deliveries with status delivered.")
		assert.Equal(t, http.StatusBadRequest, b.get("/admin/webhooks/"+ep.ID+"?status=lost").status)

		// Switched off: resend and recover say to switch it on first.
		r := b.post("/admin/deliveries/"+d.ID+"/resend", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), "switched off after 20 failures; enable it first")
		since := time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")
		r = b.post("/admin/webhooks/"+ep.ID+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), "enable it first")

		// Switch it on again: the failure count starts afresh.
		r = b.post("/admin/webhooks/"+ep.ID+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"true"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/webhooks/"+ep.ID+"?done=webhook-enabled", r.header.Get("Location"))
		got, err := s.store.GetWebhookEndpoint(ctx, s.org.ID, ep.ID)
		require.NoError(t, err)
		assert.Nil(t, got.SwitchedOffAt)
		assert.Zero(t, got.ConsecutiveFailures)
		assert.True(t, got.Enabled)
		page = b.get(r.header.Get("Location"))
		assert.Contains(t, page.body, "The endpoint is on again")
		assert.NotContains(t, page.body, `<h2 id="off-h">`)
		assert.Contains(t, page.body, "Disable endpoint")

		// Resend queues the same delivery again.
		r = b.post("/admin/deliveries/"+d.ID+"/resend", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/webhooks/"+ep.ID+"?done=delivery-resent", r.header.Get("Location"))
		dl, err := s.store.GetDelivery(ctx, s.org.ID, d.ID)
		require.NoError(t, err)
		assert.Equal(t, models.DeliveryPending, dl.Status)
		assert.Equal(t, 1, dl.Sends)
		queued, err := s.store.UnstartedDeliveries(ctx, time.Now(), 10)
		require.NoError(t, err)
		require.Len(t, queued, 1, "the dispatcher will start it")
		assert.Equal(t, d.ID, queued[0].ID)
		page = b.get(r.header.Get("Location"))
		assert.Contains(t, page.body, "queued to be sent again under the same delivery id")
		assert.NotContains(t, page.body, `action="/admin/deliveries/`+d.ID+`/resend"`, "no resend while it is being attempted")
		r = b.post("/admin/deliveries/"+d.ID+"/resend", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), "still being attempted")

		// Recover: the time is checked, then what failed since is queued.
		for _, tc := range []struct{ since, want string }{
			{"yesterday", "Since must be a date and time in UTC, such as 2026-01-02T15:04."},
			{time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04"), "Since must not be in the future."},
		} {
			r = b.post("/admin/webhooks/"+ep.ID+"/recover", url.Values{"csrf": {csrf}, "since": {tc.since}})
			assert.Equal(t, http.StatusBadRequest, r.status, tc.since)
			assert.Equal(t, tc.want, problemOf(t, r))
			assert.Contains(t, r.body, `value="`+tc.since+`" aria-invalid="true"`)
		}
		second := s.failedDelivery(t, s.org.ID, ep)
		r = b.post("/admin/webhooks/"+ep.ID+"/recover", url.Values{"csrf": {csrf}, "since": {since}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, b.get(r.header.Get("Location")).body, "Queued 1 failed or skipped delivery to be sent again.")
		dl, err = s.store.GetDelivery(ctx, s.org.ID, second.ID)
		require.NoError(t, err)
		assert.Equal(t, models.DeliveryPending, dl.Status)

		// Disable, then delete.
		r = b.post("/admin/webhooks/"+slack.ID+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"false"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, _ = s.store.GetWebhookEndpoint(ctx, s.org.ID, slack.ID)
		assert.False(t, got.Enabled)
		assert.Contains(t, b.get("/admin/webhooks/"+slack.ID).body, "Enable endpoint")
		r = b.post("/admin/webhooks/"+slack.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, http.StatusNotFound, b.get("/admin/webhooks/"+slack.ID).status)

		// Another organisation's endpoint and deliveries are not found.
		other := s.otherOrg(t)
		theirs, err := s.store.CreateWebhookEndpoint(ctx, other.ID, models.NewWebhookEndpoint{URL: "https://them.example/",
			Format: models.FormatJSON, Enabled: false, Secret: "whsec_them"})
		require.NoError(t, err)
		theirDelivery := s.failedDelivery(t, other.ID, theirs)
		r = b.get("/admin/webhooks/" + theirs.ID)
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.NotContains(t, r.body, "them.example")
		assert.Equal(t, http.StatusNotFound, b.post("/admin/webhooks/"+theirs.ID+"/enabled", url.Values{"csrf": {csrf}, "enabled": {"true"}}).status)
		assert.Equal(t, http.StatusNotFound, b.post("/admin/webhooks/"+theirs.ID+"/recover", url.Values{"csrf": {csrf}, "since": {since}}).status)
		assert.Equal(t, http.StatusNotFound, b.post("/admin/webhooks/"+theirs.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}}).status)
		assert.Equal(t, http.StatusNotFound, b.post("/admin/deliveries/"+theirDelivery.ID+"/resend", url.Values{"csrf": {csrf}}).status)
		got, err = s.store.GetWebhookEndpoint(ctx, other.ID, theirs.ID)
		require.NoError(t, err)
		assert.False(t, got.Enabled, "untouched")
	})
}

// receiver is a webhook receiver on this machine that answers with status
// and keeps what it was sent.
type receiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []receivedPost
}

type receivedPost struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.status.Store(http.StatusOK)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, receivedPost{header: req.Header.Clone(), body: body})
		r.mu.Unlock()
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) last(t *testing.T) receivedPost {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.got, "nothing received")
	return r.got[len(r.got)-1]
}

var webhookSecret = regexp.MustCompile(`whsec_[0-9a-f]{64}`)

func TestAdminAddsTestsAndRotatesWebhooks(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		// The loopback policy admits the receiver on this machine, as
		// `assent dev` with ASSENT_DEV_ALLOW_LOOPBACK=1 does.
		s := adminSiteWith(t, db, app.Deps{NetPolicy: netguard.DevLoopback})
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		rcv := newReceiver(t)

		list := b.get("/admin/webhooks")
		require.Equal(t, http.StatusOK, list.status, list.body)
		for _, k := range events.WebhookKinds() {
			assert.Contains(t, list.body, `name="events" value="`+k+`"`)
		}
		assert.Contains(t, list.body, `<option value="json" selected>Signed JSON</option>`)

		// Refused as the API refuses them, with what was typed kept.
		for _, tc := range []struct {
			form  url.Values
			field string
		}{
			{url.Values{"url": {"http://169.254.169.254/latest"}, "format": {"json"}}, "address"},
			{url.Values{"url": {"ftp://receiver.example/"}, "format": {"json"}}, "address"},
			{url.Values{"url": {""}, "format": {"json"}}, "address"},
			{url.Values{"url": {rcv.URL}, "format": {"json"}, "events": {events.ApprovalApproved, "approval.maybe"}}, "events, entry 2"},
			{url.Values{"url": {rcv.URL}, "format": {"carrier-pigeon"}}, "format"},
		} {
			tc.form.Set("csrf", csrf)
			r := b.post("/admin/webhooks", tc.form)
			assert.Equal(t, http.StatusBadRequest, r.status, tc.form)
			msg := problemOf(t, r)
			assert.True(t, strings.HasPrefix(strings.ToLower(msg), tc.field), "%q names %s by its label", msg, tc.field)
			assert.Contains(t, r.body, `value="`+html.EscapeString(tc.form.Get("url"))+`"`, "the address typed stays")
			assert.Empty(t, webhookSecret.FindAllString(r.body, -1))
		}
		eps, _, err := s.store.ListWebhookEndpoints(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, eps, "nothing was added")

		// Added: the endpoint's page shows the secret, this once.
		created := b.post("/admin/webhooks", url.Values{"csrf": {csrf}, "url": {rcv.URL + "/hook"}, "format": {"json"},
			"events": {events.ApprovalApproved, events.ApprovalRejected}})
		require.Equal(t, http.StatusCreated, created.status, created.body)
		assert.Equal(t, "no-store", created.header.Get("Cache-Control"))
		secrets := webhookSecret.FindAllString(created.body, -1)
		require.Len(t, secrets, 1, "the secret is on the page, once")
		secret := secrets[0]
		eps, _, err = s.store.ListWebhookEndpoints(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, eps, 1)
		ep := eps[0]
		assert.Equal(t, rcv.URL+"/hook", ep.URL)
		assert.Equal(t, models.FormatJSON, ep.Format)
		assert.Equal(t, models.StringList{events.ApprovalApproved, events.ApprovalRejected}, ep.Events)
		assert.True(t, ep.Enabled)
		kept, err := s.store.WebhookSecrets(&ep, models.Now())
		require.NoError(t, err)
		assert.Equal(t, []string{secret}, kept)
		assert.Contains(t, created.body, `action="/admin/webhooks/`+ep.ID+`/test"`)
		page := b.get("/admin/webhooks/" + ep.ID)
		assert.Empty(t, webhookSecret.FindAllString(page.body, -1), "never shown again")
		assert.Contains(t, page.body, `value="approval.approved" checked`, "the settings form holds the endpoint's events")
		assert.NotContains(t, page.body, `value="approval.requested" checked`)

		// Send test: signed with the secret, marked as a test, not logged.
		tested := b.post("/admin/webhooks/"+ep.ID+"/test", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusOK, tested.status, tested.body)
		assert.Regexp(t, `The test was delivered: HTTP 200 in \d+ ms\.`, tested.body)
		got := rcv.last(t)
		require.NoError(t, webhook.Verify(got.header.Get("Assent-Signature"), got.body, secret, time.Now(), 5*time.Minute))
		assert.Equal(t, events.WebhookTest, got.header.Get("Assent-Event"), "a test never names a real event")
		var body map[string]any
		require.NoError(t, json.Unmarshal(got.body, &body))
		assert.Equal(t, true, body["test"])
		assert.Equal(t, events.WebhookTest, body["event"])

		rcv.status.Store(http.StatusInternalServerError)
		tested = b.post("/admin/webhooks/"+ep.ID+"/test", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusOK, tested.status, tested.body)
		assert.Contains(t, tested.body, "The test was not delivered: HTTP 500")
		after, err := s.store.GetWebhookEndpoint(ctx, s.org.ID, ep.ID)
		require.NoError(t, err)
		assert.Zero(t, after.ConsecutiveFailures, "a test never counts toward switch-off")
		logged, _, err := s.store.ListDeliveryLog(ctx, s.org.ID, models.DeliveryFilter{EndpointID: ep.ID}, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, logged, "a test is not a delivery")
		rcv.status.Store(http.StatusOK)

		// Rotate: a new secret, shown once; both sign for a day.
		rotated := b.post("/admin/webhooks/"+ep.ID+"/rotate-secret", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusOK, rotated.status, rotated.body)
		secrets = webhookSecret.FindAllString(rotated.body, -1)
		require.Len(t, secrets, 1)
		newSecret := secrets[0]
		assert.NotEqual(t, secret, newSecret)
		assert.Contains(t, rotated.body, "The previous secret keeps signing beside it until")
		b.post("/admin/webhooks/"+ep.ID+"/test", url.Values{"csrf": {csrf}})
		got = rcv.last(t)
		for _, sec := range []string{secret, newSecret} {
			assert.NoError(t, webhook.Verify(got.header.Get("Assent-Signature"), got.body, sec, time.Now(), 5*time.Minute))
		}

		// Settings: an empty address keeps the current one; no event
		// ticked means every event.
		r := b.post("/admin/webhooks/"+ep.ID, url.Values{"csrf": {csrf}, "url": {""}, "format": {"slack"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/admin/webhooks/"+ep.ID+"?done=webhook-updated", r.header.Get("Location"))
		after, err = s.store.GetWebhookEndpoint(ctx, s.org.ID, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, rcv.URL+"/hook", after.URL)
		assert.Equal(t, models.FormatSlack, after.Format)
		assert.Empty(t, after.Events)
		page = b.get(r.header.Get("Location"))
		assert.Contains(t, page.body, "The endpoint&#39;s settings were saved.")
		assert.Contains(t, page.body, "All events, including ones added later")
		r = b.post("/admin/webhooks/"+ep.ID, url.Values{"csrf": {csrf}, "url": {"https://10.0.0.7/hook"}, "format": {"json"},
			"events": {events.ApprovalExpired}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.True(t, strings.HasPrefix(problemOf(t, r), "Address"), problemOf(t, r))
		assert.Contains(t, r.body, `value="approval.expired" checked`, "what was ticked stays ticked")
		after, err = s.store.GetWebhookEndpoint(ctx, s.org.ID, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, models.FormatSlack, after.Format, "a refused change changes nothing")

		// The page refuses exactly what the API refuses.
		_, adminKey, err := s.store.CreateKey(ctx, s.org.ID, "admin", models.KeyAdmin, nil)
		require.NoError(t, err)
		status, apiMsg := apiError(t, s.store, adminKey, "/api/v1/admin/webhooks", `{"url":"https://10.0.0.7/hook"}`)
		assert.Equal(t, http.StatusBadRequest, status)
		r = b.post("/admin/webhooks", url.Values{"csrf": {csrf}, "url": {"https://10.0.0.7/hook"}, "format": {"json"}})
		assert.Equal(t, "Address"+strings.TrimPrefix(apiMsg, "url")+".", problemOf(t, r), "the page refuses as the API does, naming the field by its label")

		// Another organisation's endpoint is not found, and not changed.
		other := s.otherOrg(t)
		theirs, err := s.store.CreateWebhookEndpoint(ctx, other.ID, models.NewWebhookEndpoint{URL: rcv.URL + "/them",
			Format: models.FormatJSON, Enabled: true, Secret: "whsec_them"})
		require.NoError(t, err)
		sent := len(rcv.got)
		for _, path := range []string{"", "/test", "/rotate-secret"} {
			r := b.post("/admin/webhooks/"+theirs.ID+path, url.Values{"csrf": {csrf}, "format": {"slack"}})
			assert.Equal(t, http.StatusNotFound, r.status, path)
			assert.NotContains(t, r.body, "whsec_")
		}
		unchanged, err := s.store.GetWebhookEndpoint(ctx, other.ID, theirs.ID)
		require.NoError(t, err)
		kept, err = s.store.WebhookSecrets(unchanged, models.Now())
		require.NoError(t, err)
		assert.Equal(t, []string{"whsec_them"}, kept)
		assert.Equal(t, models.FormatJSON, unchanged.Format)
		assert.Len(t, rcv.got, sent, "nothing was sent to them")
	})
}

// TestAdminRuleEscalation: the rule form takes an approval rule's
// escalation (after as typed, "4h" or whole seconds; to as a list), saves
// it through the admin service as the API does, refuses what the API
// refuses with the same words, marking the input and keeping what was
// typed, and the list shows it.
func TestAdminRuleEscalation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		_, adminKey, err := s.store.CreateKey(ctx, s.org.ID, "admin", models.KeyAdmin, nil)
		require.NoError(t, err)

		for _, tc := range []struct {
			form url.Values
			api  string
			// page is the page's words: the API's, the field named by its
			// label, with a capital and a full stop.
			page  string
			field string
		}{
			{url.Values{"kind": {"approval"}, "escalation.after": {"soon"}, "escalation.to": {"finance-leads"}},
				`{"kind":"approval","escalation":{"after":"soon","to":["finance-leads"]}}`,
				`Escalate after must be a duration such as "4h" or whole seconds.`, "escalation.after"},
			{url.Values{"kind": {"approval"}, "escalation.after": {"0"}, "escalation.to": {"finance-leads"}},
				`{"kind":"approval","escalation":{"after":0,"to":["finance-leads"]}}`,
				"Escalate after must be a positive whole number of seconds.", "escalation.after"},
			{url.Values{"kind": {"approval"}, "escalation.after": {"4h"}},
				`{"kind":"approval","escalation":{"after":"4h"}}`, "Escalate to is required.", "escalation.to"},
			{url.Values{"kind": {"approval"}, "escalation.to": {"finance-leads"}},
				`{"kind":"approval","escalation":{"to":["finance-leads"]}}`, "Escalate after is required.", "escalation.after"},
			{url.Values{"kind": {"ethics"}, "principle": {"privacy"}, "concern": {"c"}, "escalation.after": {"4h"}, "escalation.to": {"finance-leads"}},
				`{"kind":"ethics","principle":"privacy","concern":"c","escalation":{"after":"4h","to":["finance-leads"]}}`,
				"Escalation belongs to approval rules.", ""},
		} {
			tc.form.Set("csrf", csrf)
			tc.form.Set("name", "late")
			r := b.post("/admin/rules", tc.form)
			require.Equal(t, http.StatusBadRequest, r.status, tc.api)
			assert.Equal(t, tc.page, problemOf(t, r), tc.api)
			status, want := apiError(t, s.store, adminKey, "/api/v1/admin/rules", `{"name":"late",`+tc.api[1:])
			require.Equal(t, http.StatusBadRequest, status, tc.api)
			// The page says it with the form's labels; the API with its field names.
			label := map[string]string{"escalation.after": "Escalate after", "escalation.to": "Escalate to", "": "Escalation"}[tc.field]
			assert.Equal(t, strings.TrimSuffix(strings.Replace(tc.page, label, cmp.Or(tc.field, "escalation"), 1), "."), want, "the page and the API refuse alike: %s", tc.api)
			if tc.field != "" {
				assert.Contains(t, r.body, `id="`+tc.field+`" name="`+tc.field+`" type="text" value="`+html.EscapeString(tc.form.Get(tc.field))+`" aria-invalid="true"`,
					"%s marked, what was typed kept", tc.field)
			}
		}

		r := b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"slow refunds"}, "kind": {"approval"},
			"escalation.after": {" 4h "}, "escalation.to": {"finance-leads, ada@example.com"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		r = b.post("/admin/rules", url.Values{"csrf": {csrf}, "name": {"big payments"}, "kind": {"approval"}, "requiredApprovals": {"2"},
			"escalation.after": {"5400"}, "escalation.to": {"cfo@example.com"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)

		rules, _, err := s.store.ListRules(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, rules, 2)
		big, slow := rules[0], rules[1]
		assert.Equal(t, 0, slow.RequiredApprovals)
		assert.Equal(t, 4*60*60, slow.EscalationAfter)
		assert.Equal(t, []string{"finance-leads", "ada@example.com"}, []string(slow.EscalationTo))
		assert.Equal(t, 2, big.RequiredApprovals)
		assert.Equal(t, 5400, big.EscalationAfter, "whole seconds")
		assert.Equal(t, []string{"cfo@example.com"}, []string(big.EscalationTo))

		list := b.get("/admin/rules")
		assert.Contains(t, list.body, "Escalates after 4 hours to <code>finance-leads</code>, <code>ada@example.com</code>")
		assert.Contains(t, list.body, "Needs 2 approvals; escalates after 90 minutes to <code>cfo@example.com</code>")
		assert.NotContains(t, list.body, "Needs 0 approvals")
	})
}

func TestAdminActions(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := adminSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		schema := `{"type":"object","properties":{"amount":{"type":"number"}}}`
		form := func(policy string) url.Values {
			return url.Values{"csrf": {csrf}, "name": {"refund.create"}, "description": {"Refund a customer"},
				"inputSchema": {schema}, "editableFields": {"amount"}, "policy": {policy}}
		}

		r := b.post("/admin/actions", form(`[{"name":"small","condition":"input.amount <=","outcome":"allow"}]`))
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, problemOf(t, r), "Policy, entry 1 (condition): the condition does not compile")
		assert.Contains(t, r.body, `id="policy" name="policy" rows="8" class="mono" aria-invalid="true"`, "policy[0].condition marks the policy")
		assert.Contains(t, r.body, "input.amount &lt;=", "what was typed is kept")
		r = b.post("/admin/actions", form(`{"name":"small"}`))
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, problemOf(t, r), "olicy must be a JSON list of rules")
		bad := form(`[]`)
		bad.Set("inputSchema", `{"type":"objekt"}`)
		r = b.post("/admin/actions", bad)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, problemOf(t, r), "not valid JSON Schema")

		r = b.post("/admin/actions", form(`[{"name":"small","condition":"input.amount <= 100","outcome":"allow"}]`))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		list := b.get("/admin/actions")
		assert.Contains(t, list.body, "<code>refund.create</code>")
		assert.Contains(t, list.body, "<strong>small</strong>: allow when <code class=\"wrap\">input.amount &lt;= 100</code>")
		actions, _, err := s.store.ListActions(ctx, s.org.ID, models.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, actions, 1)

		// Editing shows the saved action and saves over it.
		edit := b.get("/admin/actions?edit=" + actions[0].ID)
		assert.Contains(t, edit.body, `name="id" value="`+actions[0].ID+`"`)
		assert.Contains(t, edit.body, "Change refund.create")
		changed := form(`[{"name":"none","outcome":"deny","reason":"frozen"}]`)
		changed.Set("id", actions[0].ID)
		changed.Set("decisionTokenTtlSeconds", "600")
		changed.Set("executors", "key_nope")
		r = b.post("/admin/actions", changed)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, problemOf(t, r), "Executors")
		runner, _, err := s.store.CreateKey(ctx, s.org.ID, "runner", models.KeyAgent, nil)
		require.NoError(t, err)
		changed.Set("executors", runner.ID)
		r = b.post("/admin/actions", changed)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := s.store.GetAction(ctx, s.org.ID, actions[0].ID)
		require.NoError(t, err)
		assert.Equal(t, "deny", got.Policy.V[0].Outcome)
		assert.Equal(t, 600, *got.DecisionTokenTTLSeconds)
		assert.Equal(t, models.StringList{runner.ID}, got.Executors)
		assert.Contains(t, b.get("/admin/actions?edit="+got.ID).body, `value="`+runner.ID+`"`, "the form shows the executors")

		r = b.post("/admin/actions/"+got.ID+"/delete", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusBadRequest, r.status, "deleting needs Confirm")
		r = b.post("/admin/actions/"+got.ID+"/delete", url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		_, err = s.store.GetAction(ctx, s.org.ID, got.ID)
		assert.Error(t, err)
	})
}
