package web_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/delegations"
	"github.com/assent-hq/assent/gate"
	"github.com/assent-hq/assent/internal/scopes"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// mandateSite is a deciding site with the refund action registered (its
// review rule asks Finance, Bob an administrator and Ada a member, at high
// risk) and an agent key that asks the gate.
type mandateSite struct {
	*site
	bob   *models.Member
	agent models.Actor
}

// refundPolicy is api/gate_test.go's refund action, as the gate takes it.
const refundPolicy = `{
  "name": "refund.create",
  "description": "Refund a customer",
  "inputSchema": {
    "type": "object",
    "required": ["amount", "currency", "customer"],
    "additionalProperties": false,
    "properties": {
      "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 10000},
      "currency": {"enum": ["EUR", "USD"]},
      "customer": {"type": "string", "minLength": 1},
      "note": {"type": "string"}
    }
  },
  "editableFields": ["amount", "note"],
  "policy": [
    {"name": "small", "condition": "input.amount <= 100", "outcome": "allow"},
    {"name": "review", "outcome": "approval", "risk": "high", "approvers": ["Finance"], "expiresIn": "2h"}
  ]
}`

func newMandateSite(t *testing.T, db *gorm.DB) *mandateSite {
	t.Helper()
	s := &mandateSite{site: decidingSite(t, db)}
	ctx := context.Background()
	var err error
	s.bob, err = s.store.CreateMember(ctx, s.org.ID, "bob@example.com", "Bob", models.RoleAdmin)
	require.NoError(t, err)
	_, err = testenv.CreateTeam(s.store, ctx, s.org.ID, "Finance", models.TeamKindTeam, []string{s.ada.ID, s.bob.ID})
	require.NoError(t, err)
	var action gate.ActionInput
	require.NoError(t, json.Unmarshal([]byte(refundPolicy), &action))
	_, err = s.services.Gate.CreateAction(ctx, s.org, &action)
	require.NoError(t, err)
	key, _, err := s.store.CreateKey(ctx, s.org.ID, "refund agent", models.KeyAgent, []string{scopes.GateCheck})
	require.NoError(t, err)
	s.agent = models.KeyActor(s.org, key, nil)
	return s
}

// check asks the gate as the agent.
func (s *mandateSite) check(t *testing.T, input string) *gate.Result {
	t.Helper()
	r, err := s.services.Gate.Check(context.Background(), s.agent, &gate.CheckInput{Action: "refund.create", Input: json.RawMessage(input)}, nil)
	require.NoError(t, err)
	return r
}

// raise is the approval a check of input raises.
func (s *mandateSite) raise(t *testing.T, input string) *approvals.Approval {
	t.Helper()
	r := s.check(t, input)
	require.NotNil(t, r.Approval, "the check asks a person")
	return r.Approval
}

// grantForm is the approve form with the standing approval ticked.
func grantForm(t *testing.T, p page, fields map[string]string) url.Values {
	form := url.Values{"csrf": {p.csrf(t)}, "submission": {p.submission(t)}, "decision": {"approve"}, "mandate": {"yes"},
		"mandate.until": {time.Now().Add(72 * time.Hour).UTC().Format("2006-01-02T15:04")}, "mandate.condition": {`input.currency == "EUR"`},
		"mandate.count": {"10"}, "mandate.window": {"day"}}
	for k, v := range fields {
		form.Set(k, v)
	}
	return form
}

var mandateAnchor = regexp.MustCompile(`^/mandates\?done=mandate-granted#(mdt_\w+)$`)

// TestApprovalPageGrantsAMandate: on an approval the gate raised for an
// agent, an administrator among its approvers approves and grants a
// standing approval with terms built from the request; a refused mandate
// is said in the form's words and decides nothing; the mandate then
// allows a similar check, shows on the Mandates page with what is left,
// and is revoked there. A member the organisation does not let grant is
// not offered one, and one forged is refused.
func TestApprovalPageGrantsAMandate(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateSite(t, db)
		ctx := context.Background()
		a := s.raise(t, `{"amount":500,"currency":"EUR","customer":"cus_<1>"}`)

		bob := s.browser(t)
		bob.signIn(s.site, "bob@example.com")
		p := bob.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, "Approve, and approve similar requests until …")
		assert.Contains(t, p.body, html.EscapeString(`input.amount <= 500 && input.currency == "EUR" && input.customer == "cus_<1>"`)+"</textarea>",
			"the condition is built from the request, escaped")
		assert.Contains(t, p.body, `name="mandate.count" type="number" min="1" step="1" value="10"`)
		assert.Contains(t, p.body, `<option value="day" selected>day</option>`)
		assert.Contains(t, p.body, `name="mandate.until" type="datetime-local" value="`+time.Now().Add(7*24*time.Hour).UTC().Format("2006-01-02T"))
		assert.Contains(t, p.body, `<a href="/mandates">Mandates</a>`, "the layout links the Mandates page")

		// Refusals name the field as the form labels it, keep what was
		// typed, and decide nothing.
		refusals := []struct {
			fields map[string]string
			status int
			says   string
			marked string
		}{
			{map[string]string{"mandate.condition": "input.amount <= 100"}, http.StatusBadRequest,
				"Condition must hold for this request's input, so the mandate covers requests like it.", `name="mandate.condition"`},
			{map[string]string{"mandate.condition": "input.amount <"}, http.StatusBadRequest, "The condition does not compile: ", `name="mandate.condition"`},
			{map[string]string{"mandate.count": "ten"}, http.StatusBadRequest, "Requests allowed must be a whole number, such as 10.", `name="mandate.count"`},
			{map[string]string{"mandate.count": "0"}, http.StatusBadRequest, "Requests allowed must be at least 1.", `name="mandate.count"`},
			{map[string]string{"mandate.count": ""}, http.StatusBadRequest, "Budget needs a count, a sum, or both: a mandate is bounded.", `name="mandate.count"`},
			{map[string]string{"mandate.until": "2020-01-01T00:00"}, http.StatusBadRequest, "Until must be in the future.", `name="mandate.until"`},
			{map[string]string{"mandate.until": "next week"}, http.StatusBadRequest, "Until must be a date and time in UTC, such as 2026-01-02T15:04.", `name="mandate.until"`},
			{map[string]string{"mandate.until": time.Now().Add(400 * 24 * time.Hour).UTC().Format("2006-01-02T15:04")}, http.StatusBadRequest,
				"Until: a mandate holds at most 366 days after it starts.", `name="mandate.until"`},
		}
		for _, c := range refusals {
			r := bob.post("/approvals/"+a.ID+"/decision", grantForm(t, p, c.fields))
			assert.Equal(t, c.status, r.status, "%v: %s", c.fields, problemOf(t, r))
			assert.True(t, strings.HasPrefix(problemOf(t, r), c.says), "%v: %q", c.fields, problemOf(t, r))
			assert.Regexp(t, regexp.QuoteMeta(c.marked)+`[^>]*aria-invalid="true"`, r.body, "%v: the field is marked", c.fields)
			assert.Contains(t, r.body, `id="mandate" name="mandate" value="yes" checked`, "still ticked")
		}
		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "pending", got.Status, "a refused mandate decides nothing")
		none, _, err := s.services.Gate.Mandates(ctx, (&models.Person{Organization: s.org, Member: s.bob}).Actor(), gate.MandateFilter{}, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Empty(t, none)

		// Ada is among Finance, but members may not grant here: she
		// decides as before, and a mandate she forges is refused.
		ada := s.browser(t)
		ada.signIn(s.site, "ada@example.com")
		ap := ada.get("/approvals/" + a.ID)
		assert.Contains(t, ap.body, `value="approve"`)
		assert.NotContains(t, ap.body, "approve similar requests")
		r := ada.post("/approvals/"+a.ID+"/decision", grantForm(t, ap, nil))
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Equal(t, "Only owners and administrators grant mandates in this organisation (membersMayGrantMandates is off).", problemOf(t, r))

		// Bob grants ten EUR refunds a day to the refund agent.
		r = bob.post("/approvals/"+a.ID+"/decision", grantForm(t, p, map[string]string{"mandate.note": "<b>queue</b> is long", "note": "fine"}))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		m := mandateAnchor.FindStringSubmatch(r.header.Get("Location"))
		require.NotNil(t, m, r.header.Get("Location"))
		id := m[1]
		got, err = approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "approved", got.Status)
		mandate, err := s.store.GetMandate(ctx, s.org.ID, id)
		require.NoError(t, err)
		assert.Equal(t, a.ID, *mandate.ApprovalID)
		assert.Equal(t, models.StringList{s.agent.ID}, mandate.Agents, "the agent that asked")
		assert.Equal(t, `input.currency == "EUR"`, mandate.Condition)
		// The same form again (a second click, a retry) grants nothing more:
		// it answers with the same mandate.
		r = bob.post("/approvals/"+a.ID+"/decision", grantForm(t, p, nil))
		assert.Equal(t, http.StatusSeeOther, r.status, r.body)
		again := mandateAnchor.FindStringSubmatch(r.header.Get("Location"))
		require.NotNil(t, again, r.header.Get("Location"))
		assert.Equal(t, id, again[1])
		var granted int64
		require.NoError(t, db.Model(&models.Mandate{}).Where("approval_id = ?", a.ID).Count(&granted).Error)
		assert.EqualValues(t, 1, granted)

		// A similar request is allowed by it; the page shows what is left.
		allowed := s.check(t, `{"amount":900,"currency":"EUR","customer":"cus_2"}`)
		assert.Equal(t, "allowed", allowed.Check.Decision)
		assert.Equal(t, id, *allowed.Check.MandateID)
		list := bob.get("/mandates?done=mandate-granted")
		require.Equal(t, http.StatusOK, list.status, list.body)
		body := list.body
		assert.Contains(t, body, "You approved the request and granted the standing approval below")
		assert.Contains(t, body, `<li id="`+id+`">`)
		assert.Contains(t, body, "<code>refund.create</code>")
		assert.Contains(t, body, `<code class="wrap">input.currency == &#34;EUR&#34;</code>`)
		assert.Contains(t, body, "refund agent ("+s.agent.ID+")")
		assert.Contains(t, body, "<dd>10 requests in any 24 hours</dd>")
		assert.Contains(t, body, "<dt>Left now</dt><dd>9 requests</dd>")
		assert.Contains(t, body, "<dt>Uses</dt><dd>1</dd>")
		assert.Contains(t, body, "By Bob, ", "an administrator sees who granted it")
		assert.Contains(t, body, `href="/approvals/`+a.ID+`"`)
		assert.Contains(t, body, "&lt;b&gt;queue&lt;/b&gt; is long")
		assert.Contains(t, body, `action="/mandates/`+id+`/revoke"`)
		assert.Contains(t, bob.get("/mandates?live=true").body, id)

		// Ada sees only her own, and cannot revoke Bob's.
		mine := ada.get("/mandates")
		require.Equal(t, http.StatusOK, mine.status, mine.body)
		assert.Contains(t, mine.body, "No mandates yet.")
		assert.NotContains(t, mine.body, id)
		assert.Equal(t, http.StatusNotFound, ada.post("/mandates/"+id+"/revoke", url.Values{"csrf": {mine.csrf(t)}, "confirm": {"yes"}}).status)

		// Bob revokes it, once; the next similar request asks a person.
		r = bob.post("/mandates/"+id+"/revoke", url.Values{"csrf": {list.csrf(t)}})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "Tick Confirm beside the mandate first.", problemOf(t, r))
		r = bob.post("/mandates/"+id+"/revoke", url.Values{"csrf": {list.csrf(t)}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/mandates?done=mandate-revoked#"+id, r.header.Get("Location"))
		revoked := bob.get("/mandates?done=mandate-revoked")
		assert.Contains(t, revoked.body, "The standing approval was revoked")
		assert.Contains(t, revoked.body, `status-revoked`)
		assert.Regexp(t, `<dt>Revoked</dt><dd><time [^>]+>[^<]+</time> by Bob</dd>`, revoked.body)
		assert.NotContains(t, revoked.body, `action="/mandates/`+id+`/revoke"`)
		assert.NotContains(t, revoked.body, "<dt>Left now</dt>")
		assert.NotContains(t, bob.get("/mandates?live=true").body, id)
		r = bob.post("/mandates/"+id+"/revoke", url.Values{"csrf": {list.csrf(t)}, "confirm": {"yes"}})
		assert.Equal(t, http.StatusConflict, r.status)
		assert.Contains(t, problemOf(t, r), "was revoked at")
		assert.NotNil(t, s.check(t, `{"amount":900,"currency":"EUR","customer":"cus_2"}`).Approval)

		// Rejecting with the part ticked only rejects.
		rj := s.raise(t, `{"amount":300,"currency":"USD","customer":"cus_3"}`)
		rp := bob.get("/approvals/" + rj.ID)
		form := grantForm(t, rp, map[string]string{"mandate.condition": ""})
		form.Set("decision", "reject")
		r = bob.post("/approvals/"+rj.ID+"/decision", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/approvals/"+rj.ID, r.header.Get("Location"))
		all, _, err := s.services.Gate.Mandates(ctx, (&models.Person{Organization: s.org, Member: s.bob}).Actor(), gate.MandateFilter{}, models.Page{Limit: 10})
		require.NoError(t, err)
		assert.Len(t, all, 1)

		// Where members may grant, within their ceiling: the refund's risk
		// is high, so Ada is still not offered one, and is told why.
		_, err = s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{MembersMayGrantMandates: new(true)})
		require.NoError(t, err)
		high := s.raise(t, `{"amount":700,"currency":"EUR","customer":"cus_4"}`)
		hp := ada.get("/approvals/" + high.ID)
		assert.NotContains(t, hp.body, "approve similar requests")
		r = ada.post("/approvals/"+high.ID+"/decision", grantForm(t, hp, nil))
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Equal(t, "A mandate cannot stand for this approval: its risk is high, above the medium a mandate of Ada Lovelace may cover.", problemOf(t, r))
		got, err = approvals.Records(s.store).Get(ctx, s.org.ID, high.ID)
		require.NoError(t, err)
		assert.Equal(t, "pending", got.Status)
	})
}

// TestMandatesPageIsForMembers: a guest has no Mandates link and the page
// refuses them; an approval no gate raised offers no mandate.
func TestMandatesPageIsForMembers(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := decidingSite(t, db)
		_, _, err := s.store.CreateGuest(context.Background(), s.org.ID, "gail@partner.example", "Gail")
		require.NoError(t, err)
		g := s.browser(t)
		g.signIn(s, "gail@partner.example")
		assert.NotContains(t, g.get("/inbox").body, `href="/mandates"`)
		r := g.get("/mandates")
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.Contains(t, r.body, "Mandates are for the organisation&#39;s members")

		a := s.started(t, &approvals.Approval{RequestBase: models.RequestBase{Title: "Pay"}, ApproverIDs: []string{s.ada.ID}, Input: models.RawJSON(`{"amount":5}`)})
		ada := s.browser(t)
		ada.signIn(s, "ada@example.com")
		p := ada.get("/approvals/" + a.ID)
		assert.Contains(t, p.body, `value="approve"`)
		assert.NotContains(t, p.body, "approve similar requests")
		assert.Contains(t, p.body, `<a href="/mandates">Mandates</a>`)
	})
}

// TestAdministratorsSayWhoMayGrant: the Mandates page offers owners and
// administrators the organisation's setting of who may grant, and sets it
// as the API does; a member is neither offered it nor let set it.
func TestAdministratorsSayWhoMayGrant(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newSite(t, db)
		s.member(t, "bob@example.com", models.RoleAdmin)
		s.member(t, "cy@example.com", models.RoleMember)
		mayGrant := func() bool {
			org, err := s.store.GetOrganization(context.Background(), s.org.ID)
			require.NoError(t, err)
			return org.MembersMayGrantMandates
		}
		const form = `action="/admin/mandate-granting"`

		cy := s.browser(t)
		token := cy.signIn(s, "cy@example.com")
		assert.NotContains(t, cy.get("/mandates").body, form)
		r := cy.post("/admin/mandate-granting", url.Values{"csrf": {token}, "membersMayGrant": {"yes"}})
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.False(t, mayGrant(), "a member set who may grant")

		bob := s.browser(t)
		bob.signIn(s, "bob@example.com")
		p := bob.get("/mandates")
		require.Contains(t, p.body, form)
		assert.NotContains(t, p.body, `value="yes" checked`)
		r = bob.post("/admin/mandate-granting", url.Values{"csrf": {p.csrf(t)}, "membersMayGrant": {"yes"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/mandates?done=mandate-granting-members", r.header.Get("Location"))
		assert.True(t, mayGrant())
		p = bob.get("/mandates?done=mandate-granting-members")
		assert.Contains(t, p.body, `value="yes" checked`)
		assert.Contains(t, p.body, "Every member may now grant standing approvals")

		// Unticked, the box sends nothing: only owners and administrators.
		r = bob.post("/admin/mandate-granting", url.Values{"csrf": {p.csrf(t)}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		assert.Equal(t, "/mandates?done=mandate-granting-admins", r.header.Get("Location"))
		assert.False(t, mayGrant())
	})
}

// TestDelegateGrantsNoMandateFromThePage: with Bob, the one administrator,
// away to Ada, a plain member, Ada decides his restart request on his
// behalf, but the approve form offers her no standing approval and one
// she forges is refused; Bob, back, grants one from the form in his own
// right.
func TestDelegateGrantsNoMandateFromThePage(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newMandateSite(t, db)
		ctx := context.Background()
		_, err := s.store.UpdateOrganization(ctx, s.org.ID, models.OrganizationChange{MembersMayGrantMandates: new(true)})
		require.NoError(t, err)
		var restart gate.ActionInput
		require.NoError(t, json.Unmarshal([]byte(`{"name":"ops.restart","inputSchema":{"type":"object"},
			"policy":[{"name":"owners","outcome":"approval","risk":"medium"}]}`), &restart))
		_, err = s.services.Gate.CreateAction(ctx, s.org, &restart)
		require.NoError(t, err)
		bobActor := (&models.Person{Organization: s.org, Member: s.bob}).Actor()
		_, err = s.services.Delegations.Set(ctx, bobActor, delegations.SetInput{To: "ada@example.com",
			Until: time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)})
		require.NoError(t, err)
		raise := func() *approvals.Approval {
			r, err := s.services.Gate.Check(ctx, s.agent, &gate.CheckInput{Action: "ops.restart", Input: json.RawMessage(`{"service":"api"}`)}, nil)
			require.NoError(t, err)
			require.NotNil(t, r.Approval, "the check asks a person")
			return r.Approval
		}
		fields := map[string]string{"mandate.condition": `input.service == "api"`}

		a := raise()
		require.Equal(t, []string{s.ada.ID}, []string(a.ApproverIDs), "Ada stands in for Bob")
		ada := s.browser(t)
		ada.signIn(s.site, "ada@example.com")
		p := ada.get("/approvals/" + a.ID)
		require.Equal(t, http.StatusOK, p.status, p.body)
		assert.Contains(t, p.body, `value="approve"`)
		assert.NotContains(t, p.body, "approve similar requests", "no standing approval offered through a delegation")
		r := ada.post("/approvals/"+a.ID+"/decision", grantForm(t, p, fields))
		assert.Equal(t, http.StatusForbidden, r.status, r.body)
		assert.Contains(t, problemOf(t, r), "Ada Lovelace is asked only in place of Bob, who is away")
		got, err := approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "pending", got.Status, "a refused mandate decides nothing")

		form := url.Values{"csrf": {p.csrf(t)}, "submission": {p.submission(t)}, "decision": {"approve"}}
		r = ada.post("/approvals/"+a.ID+"/decision", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err = approvals.Records(s.store).Get(ctx, s.org.ID, a.ID)
		require.NoError(t, err)
		assert.Equal(t, "approved", got.Status, "Ada decides it on Bob's behalf")
		var granted int64
		require.NoError(t, db.Model(&models.Mandate{}).Count(&granted).Error)
		assert.Zero(t, granted)

		require.NoError(t, s.services.Delegations.End(ctx, bobActor))
		back := raise()
		bob := s.browser(t)
		bob.signIn(s.site, "bob@example.com")
		bp := bob.get("/approvals/" + back.ID)
		assert.Contains(t, bp.body, "approve similar requests")
		r = bob.post("/approvals/"+back.ID+"/decision", grantForm(t, bp, fields))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.NotNil(t, mandateAnchor.FindStringSubmatch(r.header.Get("Location")), r.header.Get("Location"))
	})
}
