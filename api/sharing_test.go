package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// people adds members, a team and a guest to the fixture's organisation:
// two Dana Lees, Bob in Design, and a guest.
func (f *fixture) people(t *testing.T) (dana1, dana2, bob *models.Member, design *models.Team, guest *models.Guest) {
	t.Helper()
	ctx := context.Background()
	var err error
	dana1, err = f.store.CreateMember(ctx, f.org.ID, "dana@example.com", "Dana Lee", "")
	require.NoError(t, err)
	dana2, err = f.store.CreateMember(ctx, f.org.ID, "dana.lee@example.com", "Dana Lee", "")
	require.NoError(t, err)
	bob, err = f.store.CreateMember(ctx, f.org.ID, "bob@example.com", "Bob Stone", "")
	require.NoError(t, err)
	design, err = testenv.CreateTeam(f.store, ctx, f.org.ID, "Design", models.TeamKindTeam, []string{bob.Email})
	require.NoError(t, err)
	guest, _, err = f.store.CreateGuest(ctx, f.org.ID, "gus@partner.example", "Gus Grey")
	require.NoError(t, err)
	return
}

// TestResolveAudience: every kind of phrase, display names in any case,
// and refusals that list candidates instead of guessing.
func TestResolveAudience(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		dana1, _, bob, design, guest := f.people(t)
		ok := f.do(t, "POST", "/api/v1/audiences/resolve", f.agentKey,
			`{"audience":["bob stone","design","gus@partner.example","everyone","public","`+dana1.Email+`"]}`, nil)
		require.Equal(t, 200, ok.status, string(ok.body))
		got := ok.decoded["audience"].([]any)
		require.Len(t, got, 6)
		kinds := []string{}
		for _, m := range got {
			kinds = append(kinds, m.(map[string]any)["kind"].(string))
		}
		assert.Equal(t, []string{"member", "team", "guest", "everyone", "public", "member"}, kinds)
		assert.Equal(t, bob.ID, got[0].(map[string]any)["id"])
		assert.Equal(t, design.ID, got[1].(map[string]any)["id"])
		assert.Len(t, got[1].(map[string]any)["members"], 1)
		assert.Equal(t, guest.ID, got[2].(map[string]any)["id"])
		assert.Len(t, got[3].(map[string]any)["members"], 4, "every active member: Ada, two Danas and Bob")

		cases := []struct {
			name, body, code, field string
			candidates              []string
		}{
			{"two people share a name", `{"audience":["Dana Lee"]}`, "ambiguous_audience", "audience[0]",
				[]string{"dana@example.com", "dana.lee@example.com"}},
			{"a near miss", `{"audience":["Bob Stoen"]}`, "unknown_audience", "audience", []string{"bob@example.com"}},
			{"a misspelt team", `{"audience":["Desing"]}`, "unknown_audience", "audience", []string{"team Design"}},
			{"nobody like it", `{"audience":["zzzzzz"]}`, "unknown_audience", "audience", nil},
			{"empty", `{"audience":[]}`, "invalid_request", "audience", nil},
			{"wrong type", `{"audience":"Design"}`, "invalid_request", "audience", nil},
			{"unknown field", `{"audience":["Design"],"extra":1}`, "invalid_request", "extra", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(t, "POST", "/api/v1/audiences/resolve", f.agentKey, c.body, nil)
				require.Equal(t, 400, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
				assert.Equal(t, c.field, errField(r, "field"))
				raw, _ := json.Marshal(r.decoded["error"].(map[string]any)["candidates"])
				for _, want := range c.candidates {
					assert.Contains(t, string(raw), want)
				}
				if c.candidates == nil && c.code == "unknown_audience" {
					assert.Equal(t, "null", string(raw), "nothing close is offered")
				}
			})
		}
		assert.Equal(t, 403, f.do(t, "POST", "/api/v1/audiences/resolve", f.readOnlyKey, `{"audience":["Design"]}`, nil).status)
		other := f.do(t, "POST", "/api/v1/audiences/resolve", f.otherAgent, `{"audience":["Design"]}`, nil)
		assert.Equal(t, "unknown_audience", errField(other, "code"), "another organisation's team is nobody")
	})
}

// TestShareAndUnshare: grants are added once each, listed as the
// report's audience, held to the sharing rules, and removed by phrase;
// report.shared fires with who was added.
func TestShareAndUnshare(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		dana1, _, bob, _, guest := f.people(t)
		rep := f.publish(t, `{"title":"Plan","slug":"plan","content":`+jsonString(html("p"))+`,"audience":["Design"]}`)
		assert.Equal(t, []any{"Design"}, rep["audience"], "the create's audience is granted")

		share := f.do(t, "POST", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["design","`+dana1.ID+`","Gus Grey"]}`, nil)
		require.Equal(t, 200, share.status, string(share.body))
		added := share.decoded["added"].([]any)
		require.Len(t, added, 2, "Design was granted already")
		assert.Equal(t, dana1.Email, added[0].(map[string]any)["name"])
		assert.Equal(t, guest.Email, added[1].(map[string]any)["name"])
		assert.Len(t, share.decoded["audience"], 3)
		got := f.do(t, "GET", "/api/v1/reports/plan", f.agentKey, "", nil)
		assert.Equal(t, []any{"Design", dana1.Email, guest.Email}, got.decoded["audience"])

		events, err := f.store.ListEvents(context.Background(), f.org.ID, rep["id"].(string))
		require.NoError(t, err)
		var shared []models.Event
		for _, e := range events {
			if e.Kind == "report.shared" {
				shared = append(shared, e)
			}
		}
		require.Len(t, shared, 1, "the create's grants are part of report.published")
		var data struct {
			Report map[string]any   `json:"report"`
			Added  []map[string]any `json:"added"`
		}
		require.NoError(t, json.Unmarshal(shared[0].Data, &data))
		assert.Equal(t, rep["id"], data.Report["id"])
		assert.Len(t, data.Added, 2)
		again := f.do(t, "POST", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["Design"]}`, nil)
		assert.Empty(t, again.decoded["added"])

		cases := []struct {
			name, key, slug, class, body string
			status                       int
			code                         string
		}{
			{"agent key makes it public", f.agentKey, "c-internal", "internal", `{"audience":["public"]}`, 403, "public_sharing_denied"},
			{"confidential never public", f.memberToken, "c-conf", "confidential", `{"audience":["public"]}`, 403, "sharing_denied"},
			{"restricted: no teams", f.memberToken, "c-restr", "restricted", `{"audience":["Design"]}`, 403, "sharing_denied"},
			{"restricted: no everyone", f.memberToken, "c-restr2", "restricted", `{"audience":["everyone"]}`, 403, "sharing_denied"},
			{"restricted: a named person", f.agentKey, "c-restr3", "restricted", `{"audience":["bob@example.com"]}`, 200, ""},
			{"a person makes it public", f.memberToken, "c-pub", "internal", `{"audience":["public"]}`, 200, ""},
			{"one refused phrase grants nothing", f.agentKey, "c-none", "internal", `{"audience":["Design","nobody@x.example"]}`, 400, "unknown_audience"},
			{"no scope", f.readOnlyKey, "c-scope", "internal", `{"audience":["Design"]}`, 403, "insufficient_scope"},
			{"another organisation", f.otherAgent, "c-other", "internal", `{"audience":["everyone"]}`, 404, "not_found"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				f.publish(t, `{"title":"C","slug":"`+c.slug+`","classification":"`+c.class+`","content":`+jsonString(html("c"))+`}`)
				r := f.do(t, "POST", "/api/v1/reports/"+c.slug+"/share", c.key, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				if c.code != "" {
					assert.Equal(t, c.code, errField(r, "code"))
					after := f.do(t, "GET", "/api/v1/reports/"+c.slug, f.agentKey, "", nil)
					assert.Empty(t, after.decoded["audience"], "nothing granted")
				}
			})
		}
		create := f.do(t, "POST", "/api/v1/reports", f.agentKey,
			`{"title":"P","classification":"internal","audience":["public"],"content":`+jsonString(html("x"))+`}`, nil)
		assert.Equal(t, 403, create.status, "the create's audience follows the same rules")
		assert.Equal(t, "public_sharing_denied", errField(create, "code"))
		restricted := f.do(t, "POST", "/api/v1/reports", f.agentKey,
			`{"title":"R","classification":"restricted","audience":["everyone"],"content":`+jsonString(html("x"))+`}`, nil)
		assert.Equal(t, "sharing_denied", errField(restricted, "code"))

		un := f.do(t, "DELETE", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["DESIGN","gus@partner.example"]}`, nil)
		require.Equal(t, 200, un.status, string(un.body))
		assert.Len(t, un.decoded["removed"], 2)
		assert.Len(t, un.decoded["audience"], 1)
		none := f.do(t, "DELETE", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["Design"]}`, nil)
		require.Equal(t, 200, none.status)
		assert.Empty(t, none.decoded["removed"])

		// A member who published owns it: their access is not a grant.
		mine := f.do(t, "POST", "/api/v1/reports", f.memberToken, `{"title":"Mine","slug":"mine","content":`+jsonString(html("m"))+`}`, nil)
		require.Equal(t, 201, mine.status)
		owner := f.do(t, "DELETE", "/api/v1/reports/mine/share", f.memberToken, `{"audience":["ada@example.com"]}`, nil)
		assert.Equal(t, 409, owner.status)
		assert.Equal(t, "invalid_state", errField(owner, "code"))

		// A grant to someone since deactivated is removed by its name.
		f.do(t, "POST", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["bob@example.com"]}`, nil)
		off := false
		testenv.ChangeMember(t, f.store, f.org.ID, bob.ID, func(m *models.Member) { m.Active = off })
		gone := f.do(t, "DELETE", "/api/v1/reports/plan/share", f.agentKey, `{"audience":["bob@example.com"]}`, nil)
		require.Equal(t, 200, gone.status, string(gone.body))
		assert.Len(t, gone.decoded["removed"], 1)
	})
}

// TestSharingRulesAndReclassification: an organisation's sharing rule
// forbids what its condition matches, a broken one is refused when saved,
// and reclassifying removes the grants the new level does not allow.
func TestSharingRulesAndReclassification(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		f.people(t)
		bad := []struct{ body, field string }{
			{`{"name":"x","kind":"sharing","condition":"request.risk == 'high'"}`, "condition"},
			{`{"name":"x","kind":"sharing","condition":"grant.kind"}`, "condition"},
			{`{"name":"x","kind":"sharing"}`, "condition"},
		}
		for _, b := range bad {
			r := f.do(t, "POST", "/api/v1/admin/rules", f.adminKey, b.body, nil)
			assert.Equal(t, 400, r.status, b.body)
			assert.Equal(t, b.field, errField(r, "field"), b.body)
		}
		rule := f.do(t, "POST", "/api/v1/admin/rules", f.adminKey,
			`{"name":"No guests on confidential reports","kind":"sharing","condition":"report.classification == 'confidential' && grant.kind == 'guest'"}`, nil)
		require.Equal(t, 201, rule.status, string(rule.body))

		f.publish(t, `{"title":"Secret","slug":"secret","classification":"confidential","content":`+jsonString(html("s"))+`}`)
		denied := f.do(t, "POST", "/api/v1/reports/secret/share", f.agentKey, `{"audience":["Design","gus@partner.example"]}`, nil)
		require.Equal(t, 403, denied.status, string(denied.body))
		assert.Equal(t, "sharing_denied", errField(denied, "code"))
		assert.Equal(t, "audience[1]", errField(denied, "field"))
		assert.Contains(t, errField(denied, "message"), "No guests on confidential reports")
		assert.Empty(t, f.do(t, "GET", "/api/v1/reports/secret", f.agentKey, "", nil).decoded["audience"], "nothing granted")
		assert.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/secret/share", f.agentKey, `{"audience":["Design"]}`, nil).status)

		f.publish(t, `{"title":"Open","slug":"open","content":`+jsonString(html("o"))+`}`)
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/open/share", f.memberToken, `{"audience":["public","Design","gus@partner.example","dana@example.com"]}`, nil).status)
		conf := f.do(t, "PATCH", "/api/v1/reports/open", f.agentKey, `{"classification":"confidential"}`, nil)
		require.Equal(t, 200, conf.status, string(conf.body))
		assert.Equal(t, "confidential", conf.decoded["classification"])
		names := func(list any) []string {
			var out []string
			for _, g := range list.([]any) {
				out = append(out, g.(map[string]any)["name"].(string))
			}
			return out
		}
		assert.ElementsMatch(t, []string{"public", "gus@partner.example"}, names(conf.decoded["removedGrants"]),
			"confidential is never public, and the organisation's rule keeps guests off it")
		restricted := f.do(t, "PATCH", "/api/v1/reports/open", f.agentKey, `{"classification":"restricted"}`, nil)
		require.Equal(t, 200, restricted.status)
		assert.Equal(t, []string{"Design"}, names(restricted.decoded["removedGrants"]))
		assert.Equal(t, []any{"dana@example.com"}, restricted.decoded["audience"])
		same := f.do(t, "PATCH", "/api/v1/reports/open", f.agentKey, `{"classification":"restricted"}`, nil)
		assert.Empty(t, same.decoded["removedGrants"])
		assert.Equal(t, 400, f.do(t, "PATCH", "/api/v1/reports/open", f.agentKey, `{"classification":"secret"}`, nil).status)
		assert.Equal(t, 404, f.do(t, "PATCH", "/api/v1/reports/open", f.otherAgent, `{"classification":"public"}`, nil).status)
	})
}

// TestSendReport: members and guests are granted, new addresses become
// guests, the rules hold, and a retry with the key sends once.
func TestSendReport(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		_, _, bob, _, guest := f.people(t)
		rep := f.publish(t, `{"title":"Q3","slug":"q3","content":`+jsonString(html("q"))+`}`)
		body := `{"to":["` + bob.Email + `","GUS@partner.example","pat@new.example","pat@new.example"],"note":"For Monday"}`
		sent := f.do(t, "POST", "/api/v1/reports/q3/send", f.agentKey, body, map[string]string{"Idempotency-Key": "send-1"})
		require.Equal(t, 202, sent.status, string(sent.body))
		rc := sent.decoded["recipients"].([]any)
		require.Len(t, rc, 3, "each address once")
		kinds := map[string]string{}
		for _, r := range rc {
			m := r.(map[string]any)
			kinds[m["email"].(string)] = m["kind"].(string)
			assert.Equal(t, m["email"] == "pat@new.example", m["admitted"], m["email"])
		}
		assert.Equal(t, map[string]string{bob.Email: "member", guest.Email: "guest", "pat@new.example": "guest"}, kinds)
		pat, err := f.store.GuestByEmail(context.Background(), f.org.ID, "pat@new.example")
		require.NoError(t, err, "a new address is admitted as a guest")
		assert.Len(t, sent.decoded["added"], 3)

		again := f.do(t, "POST", "/api/v1/reports/q3/send", f.agentKey, body, map[string]string{"Idempotency-Key": "send-1"})
		assert.Equal(t, sent.decoded["id"], again.decoded["id"], "the key replays the send")
		other := f.do(t, "POST", "/api/v1/reports/q3/send", f.agentKey, `{"to":["pat@new.example"]}`, nil)
		require.Equal(t, 202, other.status)
		assert.Empty(t, other.decoded["added"], "a send to someone with access grants nothing new")
		var sends int64
		require.NoError(t, db.Model(&models.ReportSend{}).Where("report_id = ?", rep["id"]).Count(&sends).Error)
		assert.EqualValues(t, 2, sends)
		events, err := f.store.ListEvents(context.Background(), f.org.ID, rep["id"].(string))
		require.NoError(t, err)
		shared := 0
		for _, e := range events {
			if e.Kind == "report.shared" {
				shared++
				assert.Contains(t, string(e.Data), pat.ID)
			}
		}
		assert.Equal(t, 1, shared)

		f.do(t, "POST", "/api/v1/admin/rules", f.adminKey, `{"name":"No outsiders","kind":"sharing","condition":"grant.kind == 'guest'"}`, nil)
		cases := []struct {
			name, body  string
			status      int
			code, field string
		}{
			{"a rule forbids", `{"to":["new2@else.example"]}`, 403, "sharing_denied", "to[0]"},
			{"not an address", `{"to":["bob"]}`, 400, "invalid_request", "to[0]"},
			{"none", `{"to":[]}`, 400, "invalid_request", "to"},
			{"too many", `{"to":[` + strings.Repeat(`"a@b.example",`, 50) + `"a@b.example"]}`, 400, "invalid_request", "to"},
			{"long note", `{"to":["` + bob.Email + `"],"note":"` + strings.Repeat("n", 2001) + `"}`, 400, "invalid_request", "note"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(t, "POST", "/api/v1/reports/q3/send", f.agentKey, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
				assert.Equal(t, c.field, errField(r, "field"))
			})
		}
		_, err = f.store.GuestByEmail(context.Background(), f.org.ID, "new2@else.example")
		assert.Error(t, err, "a refused send admits nobody")
	})
}

// TestWhoMayChangeWhoReads: a member token changes who reads a report
// only as its owner or an administrator; an archived report is not
// shared or sent; a member token reads datasets only by a grant; `everyone`
// beside a team of that name is refused, not guessed.
func TestWhoMayChangeWhoReads(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		_, _, bob, _, _ := f.people(t)
		_, bobToken, err := f.store.CreateMemberToken(ctx, f.org.ID, bob.ID)
		require.NoError(t, err)
		f.publish(t, `{"title":"Agent's","slug":"agents","content":`+jsonString(html("a"))+`}`)
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/api/v1/reports/agents/share", `{"audience":["bob@example.com"]}`},
			{"DELETE", "/api/v1/reports/agents/share", `{"audience":["Design"]}`},
			{"POST", "/api/v1/reports/agents/send", `{"to":["bob@example.com"]}`},
			{"PATCH", "/api/v1/reports/agents", `{"classification":"public"}`},
		} {
			r := f.do(t, c.method, c.path, bobToken, c.body, nil)
			assert.Equal(t, 403, r.status, c.method+" "+c.path)
			assert.Equal(t, "forbidden", errField(r, "code"))
		}
		assert.Empty(t, f.do(t, "GET", "/api/v1/reports/agents", f.agentKey, "", nil).decoded["audience"], "Bob did not let himself in")

		mine := f.do(t, "POST", "/api/v1/reports", bobToken, `{"title":"Bob's","slug":"bobs","content":`+jsonString(html("b"))+`}`, nil)
		require.Equal(t, 201, mine.status, string(mine.body))
		assert.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/bobs/share", bobToken, `{"audience":["Design"]}`, nil).status, "the owner shares")
		assert.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/bobs/share", f.memberToken, `{"audience":["everyone"]}`, nil).status, "an owner of the organisation too")

		require.Equal(t, 201, f.do(t, "PUT", "/api/v1/reports/agents/data/metrics", f.agentKey, `{"a":1}`, nil).status)
		assert.Equal(t, 403, f.do(t, "GET", "/api/v1/reports/agents/data/metrics", bobToken, "", nil).status, "not shared with Bob")
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/agents/share", f.agentKey, `{"audience":["Bob Stone"]}`, nil).status)
		assert.Equal(t, 200, f.do(t, "GET", "/api/v1/reports/agents/data/metrics", bobToken, "", nil).status, "shared now")
		assert.Equal(t, 200, f.do(t, "GET", "/api/v1/reports/agents/data/metrics", f.agentKey, "", nil).status, "an agent key reads by its scope")

		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/agents/archive", f.agentKey, "", nil).status)
		for _, path := range []string{"/share", "/send"} {
			body := `{"audience":["Design"]}`
			if path == "/send" {
				body = `{"to":["bob@example.com"]}`
			}
			r := f.do(t, "POST", "/api/v1/reports/agents"+path, f.agentKey, body, nil)
			assert.Equal(t, 409, r.status, path)
			assert.Equal(t, "invalid_state", errField(r, "code"), path)
		}

		_, err = testenv.CreateTeam(f.store, ctx, f.org.ID, "Everyone", models.TeamKindGroup, []string{bob.Email})
		require.NoError(t, err)
		amb := f.do(t, "POST", "/api/v1/audiences/resolve", f.agentKey, `{"audience":["everyone"]}`, nil)
		assert.Equal(t, 400, amb.status)
		assert.Equal(t, "ambiguous_audience", errField(amb, "code"))
		person := f.do(t, "POST", "/api/v1/audiences/resolve", f.agentKey, `{"audience":["Design","dana@example.com","Bob Stone"]}`, nil)
		assert.Equal(t, 200, person.status)
		_, err = testenv.CreateTeam(f.store, ctx, f.org.ID, "Bob Stone", models.TeamKindTeam, []string{bob.Email})
		require.NoError(t, err)
		clash := f.do(t, "POST", "/api/v1/audiences/resolve", f.agentKey, `{"audience":["bob stone"]}`, nil)
		assert.Equal(t, "ambiguous_audience", errField(clash, "code"), "a person and a team of one name")
		assert.Len(t, clash.decoded["error"].(map[string]any)["candidates"], 2)
		unknown := f.do(t, "DELETE", "/api/v1/reports/bobs/share", bobToken, `{"audience":["Nobody At All"]}`, nil)
		assert.Equal(t, "unknown_audience", errField(unknown, "code"), "unsharing resolves like sharing")
	})
}
