package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/admin"
	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestSettingsPageSetsAndEndsADelegation: a member delegates and ends it
// on the settings page; a refusal is said in a person's words with what
// was typed kept, everything a person typed is escaped, and the delegate
// sees whom they stand in for.
func TestSettingsPageSetsAndEndsADelegation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		ctx := context.Background()
		bob, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob <b>", "")
		require.NoError(t, err)
		b := s.browser(t)
		csrf := b.signIn(s, "ada@example.com")
		p := b.get("/settings")
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, "Delegation while away")
		assert.Contains(t, p.body, `<a href="/settings">Settings</a>`, "the layout links it")

		r := b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"ada@example.com"}, "until": {"2099-01-01T00:00"},
			"note": {"<script>alert(1)</script>"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Who stands in for you must name someone other than you.", problemOf(t, r))
		assert.Contains(t, r.body, `value="ada@example.com" aria-invalid="true" aria-describedby="problem"`, "what was typed is kept, marked")
		assert.Contains(t, r.body, "&lt;script&gt;alert(1)&lt;/script&gt;")
		assert.NotContains(t, r.body, "<script>alert(1)")
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"soon"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Until must be a date and time in UTC, such as 2026-01-02T15:04.", problemOf(t, r))

		// Bob is away to Ada until 2098: Ada to Bob would lead back to her.
		_, err = s.services.Delegations.Set(ctx, (&models.Person{Organization: s.org, Member: bob}).Actor(),
			delegations.SetInput{To: "ada@example.com", Until: "2098-01-01T00:00:00Z"})
		require.NoError(t, err)
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"2099-01-01T00:00"}})
		assert.Equal(t, http.StatusConflict, r.status, r.body)
		assert.Equal(t, "Who stands in for you leads back to you at overlapping times (Ada Lovelace → Bob <b> → Ada Lovelace): one of those delegations must end first.",
			problemOf(t, r))
		// From when his ends, it does not.
		r = b.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "from": {"2098-01-01T00:00"},
			"until": {"2099-01-01T00:00"}, "note": {"<i>holiday</i>"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/settings?done=delegation-set", r.header.Get("Location"))
		p = b.get("/settings?done=delegation-set")
		assert.Contains(t, p.body, "Your delegation is set.")
		assert.Contains(t, p.body, "Bob &lt;b&gt; &lt;bob@example.com&gt;")
		assert.Contains(t, p.body, "&lt;i&gt;holiday&lt;/i&gt;")
		assert.Contains(t, p.body, `value="2099-01-01T00:00"`)

		bb := s.browser(t)
		bb.signIn(s, "bob@example.com")
		standsIn := bb.get("/settings")
		assert.Contains(t, standsIn.body, "You stand in for")
		assert.Contains(t, standsIn.body, "Ada Lovelace")

		r = b.post("/settings/delegation/end", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		p = b.get("/settings?done=delegation-ended")
		assert.Contains(t, p.body, "Your delegation has ended")
		assert.NotContains(t, p.body, "End delegation now")
		assert.NotContains(t, bb.get("/settings").body, "You stand in for")
	})
}

// TestApprovalPageSaysOnWhoseBehalf: a delegate asked once Ada's
// delegation started sees on whose behalf they are asked, and the settled
// page names both.
func TestApprovalPageSaysOnWhoseBehalf(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		ctx := context.Background()
		_, err := s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", "")
		require.NoError(t, err)
		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Pay"}, ApproverIDs: []string{s.ada.ID}})
		ada := s.browser(t)
		csrf := ada.signIn(s, "ada@example.com")
		r := ada.post("/settings/delegation", url.Values{"csrf": {csrf}, "to": {"bob@example.com"}, "until": {"2099-01-01T00:00"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)

		bob := s.browser(t)
		bob.signIn(s, "bob@example.com")
		page := bob.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, page.status, page.body)
		assert.Contains(t, page.body, "You are asked on behalf of Ada Lovelace, who is away")
		r = bob.post("/approvals/"+a.ID+"/decision", url.Values{"csrf": {page.csrf(t)}, "decision": {"approve"}, "submission": {page.submission(t)}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Contains(t, bob.get("/approvals/"+a.ID).body, "By Bob, on behalf of Ada Lovelace")
	})
}

// memberTokenSite is the pages mounted on the API's engine (apiSite), so
// a token minted on the page can be tried against the API, with Ada an
// owner, Cy and Dee plain members and Gus a guest.
func memberTokenSite(t *testing.T, db *gorm.DB) (s *site, cy *models.Member) {
	t.Helper()
	ctx := context.Background()
	s = apiSite(t, db, nil)
	var err error
	s.org, err = s.store.CreateOrganization(ctx, "Acme & Co", "")
	require.NoError(t, err)
	s.ada, err = s.store.CreateMember(ctx, s.org.ID, "ada@example.com", "Ada Lovelace", models.RoleOwner)
	require.NoError(t, err)
	cy, err = s.store.CreateMember(ctx, s.org.ID, "cy@example.com", "Cy", models.RoleMember)
	require.NoError(t, err)
	_, err = s.store.CreateMember(ctx, s.org.ID, "dee@example.com", "Dee", models.RoleMember)
	require.NoError(t, err)
	_, _, err = s.store.CreateGuest(ctx, s.org.ID, "gus@partner.example", "Gus")
	require.NoError(t, err)
	return s, cy
}

// apiAs calls the API at path with a bearer token and returns the status
// and the decoded body.
func (s *site) apiAs(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// mintedSecret is the token a mint's answer shows, or "".
var mintedSecret = regexp.MustCompile(`id="minted-secret"[^>]* value="(asnt_member_[a-z0-9]+)"`)

// TestSettingsPageMintsAMemberToken: a member mints their own API token
// on the Settings page, offered exactly the scopes a member may give
// their own token; the answer shows the secret once and no page shows it
// again. The mint goes through the API's rule and audit, the token calls
// the API as the member with the scopes ticked and no more, an
// administrator revokes it where the page says (another member cannot),
// and then it stops working.
func TestSettingsPageMintsAMemberToken(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, cy := memberTokenSite(t, db)
		ctx := context.Background()
		b := s.browser(t)
		csrf := b.signIn(s, "cy@example.com")
		p := b.get("/settings")
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, `<form method="post" action="/settings/tokens" novalidate>`)
		offered := regexp.MustCompile(`<input type="checkbox" id="token-scope-(\d+)" name="scopes" value="([^"]+)">`).FindAllStringSubmatch(p.body, -1)
		var values []string
		for _, m := range offered {
			values = append(values, m[2])
			assert.Contains(t, p.body, `<label for="token-scope-`+m[1]+`">`, "each checkbox is labelled")
		}
		assert.Equal(t, admin.OwnTokenScopes(nil), values, "the scopes a member may give a token of their own, none ticked")
		assert.Equal(t, scopes.All, values, "signed in, that is every scope")

		r := b.post("/settings/tokens", url.Values{"csrf": {csrf}, "scopes": {scopes.ApprovalsRead, scopes.ReportsRead}})
		require.Equal(t, http.StatusCreated, r.status, r.body)
		assert.Contains(t, r.body, "Copy it now: it will not be shown again.")
		m := mintedSecret.FindStringSubmatch(r.body)
		require.NotNil(t, m, "the answer shows the token: %s", r.body)
		secret := m[1]
		assert.Contains(t, r.body, "<code>"+secret[:len("asnt_member_")+4]+"…</code>", "and what it starts with")
		assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
		for _, again := range []string{"/settings", "/inbox", "/history"} {
			assert.NotContains(t, b.get(again).body, secret, "%s never shows it again", again)
		}

		// Minted as the API mints, audited as the API's mint is.
		var k models.APIKey
		require.NoError(t, db.Where("hash = ?", models.HashSecret(secret)).Take(&k).Error)
		assert.Equal(t, models.KeyMember, k.Kind)
		require.NotNil(t, k.MemberID)
		assert.Equal(t, cy.ID, *k.MemberID)
		assert.Equal(t, models.StringList{scopes.ApprovalsRead, scopes.ReportsRead}, k.Scopes)
		var e models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ?", "key", k.ID).Take(&e).Error)
		assert.Equal(t, models.KeyIssued, e.Action)
		assert.Equal(t, cy.ID, e.ActorID, "Cy minted it")
		assert.Equal(t, "member token for Cy (cy@example.com, "+cy.ID+"), scopes approvals:read, reports:read", e.Detail)
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))

		// It calls the API as Cy, with those scopes and no more.
		status, me := s.apiAs(t, "GET", "/api/v1/me", secret, "")
		require.Equal(t, http.StatusOK, status, me)
		assert.Equal(t, "member", me["kind"])
		assert.Equal(t, k.ID, me["keyId"])
		assert.Equal(t, []any{scopes.ApprovalsRead, scopes.ReportsRead}, me["scopes"])
		assert.Equal(t, "cy@example.com", me["member"].(map[string]any)["email"])
		status, out := s.apiAs(t, "POST", "/api/v1/me/tokens", secret, `{"scopes":["approvals:write"]}`)
		assert.Equal(t, http.StatusForbidden, status, "it cannot mint more than it holds: %v", out)

		// Another member cannot revoke it; an owner does, on the admin
		// API keys page that lists it by its start, and it stops working.
		dee := s.browser(t)
		deeCSRF := dee.signIn(s, "dee@example.com")
		r = dee.post("/admin/keys/"+k.ID+"/revoke", url.Values{"csrf": {deeCSRF}, "confirm": {"yes"}})
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		status, _ = s.apiAs(t, "GET", "/api/v1/me", secret, "")
		assert.Equal(t, http.StatusOK, status, "still working")
		ada := s.browser(t)
		adaCSRF := ada.signIn(s, "ada@example.com")
		assert.Contains(t, ada.get("/admin/keys").body, "<code>"+k.Prefix+"…</code>")
		r = ada.post("/admin/keys/"+k.ID+"/revoke", url.Values{"csrf": {adaCSRF}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		status, out = s.apiAs(t, "GET", "/api/v1/me", secret, "")
		assert.Equal(t, http.StatusUnauthorized, status, "a revoked token stops working: %v", out)
		// The admin page's revocation is audited, naming who revoked it.
		var revoked models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ? AND action = ?", "key", k.ID, models.KeyRevoked).Take(&revoked).Error)
		assert.Equal(t, s.ada.ID, revoked.ActorID, "Ada revoked it")
		assert.Equal(t, 2, revoked.Seq)
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))
	})
}

// TestSettingsPageRefusesATokenItMayNotMint: a scope a member may not
// give (one that is no scope) is refused naming the scopes field, with
// the ticks kept and what was sent escaped; so is a form with none
// ticked. Without the form's CSRF token nothing is minted; a guest has
// no form and mints nothing. No refusal mints a token.
func TestSettingsPageRefusesATokenItMayNotMint(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, _ := memberTokenSite(t, db)
		b := s.browser(t)
		csrf := b.signIn(s, "cy@example.com")

		r := b.post("/settings/tokens", url.Values{"csrf": {csrf}, "scopes": {scopes.ApprovalsRead, "admin:<b>everything</b>"}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.True(t, strings.HasPrefix(problemOf(t, r), `Unknown scope "admin:<b>everything</b>"; known scopes: approvals:read, approvals:write,`),
			"the problem names the scope and what scopes there are: %q", problemOf(t, r))
		assert.NotContains(t, r.body, "<b>everything")
		assert.Contains(t, r.body, `<fieldset class="checks" aria-describedby="problem">`, "the scopes field is marked")
		assert.Contains(t, r.body, `value="approvals:read" checked>`, "what was ticked is kept")
		assert.Nil(t, mintedSecret.FindStringSubmatch(r.body))

		r = b.post("/settings/tokens", url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Scopes: tick at least one.", problemOf(t, r))
		assert.Contains(t, r.body, `<fieldset class="checks" aria-describedby="problem">`)

		for _, form := range []url.Values{
			{"scopes": {scopes.ApprovalsRead}},
			{"scopes": {scopes.ApprovalsRead}, "csrf": {"forged"}},
		} {
			r = b.post("/settings/tokens", form)
			assert.Equal(t, http.StatusForbidden, r.status, r.body)
			assert.Contains(t, r.body, "This form has expired")
			assert.Nil(t, mintedSecret.FindStringSubmatch(r.body))
		}

		g := s.browser(t)
		gCSRF := g.signIn(s, "gus@partner.example")
		p := g.get("/settings")
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, "API tokens are for the organisation's members")
		assert.NotContains(t, p.body, `action="/settings/tokens"`)
		r = g.post("/settings/tokens", url.Values{"csrf": {gCSRF}, "scopes": {scopes.ApprovalsRead}})
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		assert.Equal(t, "An API token acts as a member of the organisation: a guest has none.", problemOf(t, r))

		var minted int64
		require.NoError(t, db.Model(&models.APIKey{}).Where("kind = ?", models.KeyMember).Count(&minted).Error)
		assert.Zero(t, minted, "no refusal minted a token")
	})
}

// TestSettingsPageListsAndRevokesOwnTokens: the Settings page lists the
// member's own tokens (what each starts with, its scopes, when it was
// made, whether it is revoked), not another member's nor an agent key, with
// a Revoke form for each live one. Revoking needs the form's CSRF token and
// Confirm ticked; another member's token or an agent key is not found and
// keeps working. The member's own stops working at once, is shown revoked
// without a form, and the revocation is audited naming them.
func TestSettingsPageListsAndRevokesOwnTokens(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s, cy := memberTokenSite(t, db)
		ctx := context.Background()
		// Minted by Cy as the Settings page mints, so it has its key.issued.
		mine, mineSecret, err := s.services.Admin.MintMemberToken(ctx, s.org.ID, (&models.Person{Organization: s.org, Member: cy}).Actor(),
			nil, cy.ID, admin.NewMemberToken{})
		require.NoError(t, err)
		kept, keptSecret, err := s.store.CreateMemberToken(ctx, s.org.ID, cy.ID)
		require.NoError(t, err)
		dee, err := s.store.ActiveMemberByEmail(ctx, s.org.ID, "dee@example.com")
		require.NoError(t, err)
		deeKey, deeSecret, err := s.store.CreateMemberToken(ctx, s.org.ID, dee.ID)
		require.NoError(t, err)
		agent, agentSecret, err := s.store.CreateKey(ctx, s.org.ID, "bot", models.KeyAgent, []string{scopes.FlowsRead})
		require.NoError(t, err)

		b := s.browser(t)
		csrf := b.signIn(s, "cy@example.com")
		p := b.get("/settings")
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, "<caption>Your API tokens</caption>")
		assert.NotContains(t, p.body, "this page does not list them")
		for _, k := range []*models.APIKey{mine, kept} {
			assert.Contains(t, p.body, `<th scope="row"><code>`+k.Prefix+`…</code></th>`, "Cy's token is listed by its start")
			assert.Contains(t, p.body, `action="/settings/tokens/`+k.ID+`/revoke"`, "with its Revoke form")
		}
		assert.Contains(t, p.body, "all "+strconv.Itoa(len(scopes.All))+" scopes", "and its scopes")
		for _, k := range []*models.APIKey{deeKey, agent} {
			assert.NotContains(t, p.body, k.Prefix, "nobody else's token, no agent key")
			assert.NotContains(t, p.body, k.ID)
		}

		revoke := func(id string, form url.Values) page {
			t.Helper()
			return b.post("/settings/tokens/"+id+"/revoke", form)
		}
		for _, form := range []url.Values{{"confirm": {"yes"}}, {"confirm": {"yes"}, "csrf": {"forged"}}} {
			r := revoke(mine.ID, form)
			assert.Equal(t, http.StatusForbidden, r.status, r.body)
			assert.Contains(t, r.body, "This form has expired")
		}
		r := revoke(mine.ID, url.Values{"csrf": {csrf}})
		assert.Equal(t, http.StatusBadRequest, r.status, r.body)
		assert.Equal(t, "Tick Confirm beside the token first.", problemOf(t, r))
		for name, id := range map[string]string{"Dee's token": deeKey.ID, "an agent key": agent.ID} {
			r = revoke(id, url.Values{"csrf": {csrf}, "confirm": {"yes"}})
			assert.Equal(t, http.StatusNotFound, r.status, "%s: %s", name, r.body)
		}
		for _, secret := range []string{mineSecret, deeSecret, agentSecret} {
			status, out := s.apiAs(t, "GET", "/api/v1/me", secret, "")
			assert.Equal(t, http.StatusOK, status, "no refusal revoked anything: %v", out)
		}

		r = revoke(mine.ID, url.Values{"csrf": {csrf}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/settings?done=token-revoked", r.header.Get("Location"))
		status, out := s.apiAs(t, "GET", "/api/v1/me", mineSecret, "")
		assert.Equal(t, http.StatusUnauthorized, status, "the revoked token stops working: %v", out)
		status, out = s.apiAs(t, "GET", "/api/v1/me", keptSecret, "")
		assert.Equal(t, http.StatusOK, status, "the other stays: %v", out)
		p = b.get("/settings?done=token-revoked")
		assert.Contains(t, p.body, "The token was revoked; requests signed with it now fail.")
		assert.Contains(t, p.body, `<th scope="row"><code>`+mine.Prefix+`…</code></th>`, "still listed")
		assert.NotContains(t, p.body, `action="/settings/tokens/`+mine.ID+`/revoke"`, "without a form")
		assert.Contains(t, p.body, `action="/settings/tokens/`+kept.ID+`/revoke"`)
		assert.Regexp(t, `Revoked <time datetime="[^"]+">`, p.body)

		var e models.AuditEntry
		require.NoError(t, db.Where("subject_type = ? AND subject_id = ? AND action = ?", "key", mine.ID, models.KeyRevoked).Take(&e).Error)
		assert.Equal(t, cy.ID, e.ActorID, "Cy revoked it")
		assert.Equal(t, 2, e.Seq, "after its key.issued")
		require.NoError(t, s.store.VerifyAuditChain(ctx, s.org.ID))

		g := s.browser(t)
		g.signIn(s, "gus@partner.example")
		assert.NotContains(t, g.get("/settings").body, "Your API tokens", "a guest has none")
	})
}
