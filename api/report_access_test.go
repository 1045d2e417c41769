package api_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// memberToken makes a member of the fixture's organisation with role and
// returns their token.
func (f *fixture) newMemberToken(t *testing.T, email, role string) string {
	t.Helper()
	ctx := context.Background()
	m, err := f.store.CreateMember(ctx, f.org.ID, email, "", role)
	require.NoError(t, err)
	_, token, err := f.store.CreateMemberToken(ctx, f.org.ID, m.ID)
	require.NoError(t, err)
	return token
}

// TestReportAccessByRole: a member who neither owns nor manages a report
// cannot read its record, change it or copy it; once it is shared with
// her she reads and copies it, but a copy stays at its source's
// classification unless whoever lowers it manages the source, and the
// source's trail records the copy.
func TestReportAccessByRole(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		cy := f.newMemberToken(t, "cy@example.com", models.RoleMember)
		f.publish(t, `{"title":"Board pack","slug":"board","classification":"confidential","living":true,"content":`+jsonString(html("<h1>v1</h1>"))+`}`)
		f.publish(t, `{"title":"Handbook","slug":"handbook","content":`+jsonString(html("<h1>h</h1>"))+`}`)
		require.Equal(t, 201, f.do(t, "POST", "/api/v1/reports/board/versions", f.agentKey, `{"content":`+jsonString(html("<h1>v2</h1>"))+`}`, nil).status)
		require.Equal(t, 201, f.do(t, "PUT", "/api/v1/reports/board/data/kpis", f.agentKey, `{"revenue":1}`, nil).status)

		refused := []struct{ method, path, body string }{
			{"GET", "/api/v1/reports/board", ""},
			{"GET", "/api/v1/reports/board/versions", ""},
			{"POST", "/api/v1/reports/board/copy", `{"slug":"mine"}`},
			{"POST", "/api/v1/reports/board/versions", `{"content":` + jsonString(html("<script>fetch('//evil.example')</script>")) + `}`},
			{"POST", "/api/v1/reports/board/rollback", `{"version":1}`},
			{"POST", "/api/v1/reports/board/archive", ``},
			{"PUT", "/api/v1/reports/board/data/kpis", `{"revenue":0}`},
			{"DELETE", "/api/v1/reports/board/data/kpis", ``},
		}
		for _, c := range refused {
			r := f.do(t, c.method, c.path, cy, c.body, nil)
			assert.Equal(t, 403, r.status, "%s %s: %s", c.method, c.path, r.body)
			assert.Equal(t, "forbidden", errField(r, "code"), "%s %s", c.method, c.path)
		}
		list := f.do(t, "GET", "/api/v1/reports", cy, "", nil)
		require.Equal(t, 200, list.status)
		assert.Empty(t, list.decoded["data"], "a member lists only the reports she reads or owns")
		assert.Len(t, f.do(t, "GET", "/api/v1/reports", f.memberToken, "", nil).decoded["data"], 2, "an owner manages every report")

		// Nothing the refused calls tried took effect.
		board := f.do(t, "GET", "/api/v1/reports/board/versions", f.agentKey, "", nil)
		assert.EqualValues(t, 2, board.decoded["latestVersion"])
		assert.EqualValues(t, 2, board.decoded["liveVersion"])
		assert.JSONEq(t, `{"revenue":1}`, string(f.do(t, "GET", "/api/v1/reports/board/data/kpis", f.agentKey, "", nil).body))

		// Shared with Cy: she reads and copies it, still not changes it.
		require.Equal(t, 200, f.do(t, "POST", "/api/v1/reports/board/share", f.agentKey, `{"audience":["cy@example.com"]}`, nil).status)
		assert.Equal(t, 200, f.do(t, "GET", "/api/v1/reports/board", cy, "", nil).status)
		assert.Equal(t, 403, f.do(t, "POST", "/api/v1/reports/board/rollback", cy, `{"version":1}`, nil).status)
		cp := f.do(t, "POST", "/api/v1/reports/board/copy", cy, `{"slug":"mine"}`, nil)
		require.Equal(t, 201, cp.status, string(cp.body))
		assert.Equal(t, "confidential", cp.decoded["classification"], "the copy keeps its source's classification")
		assert.Equal(t, "member", cp.decoded["owner"].(map[string]any)["type"])
		assert.NotNil(t, cp.decoded["copiedFromId"], "the copy names its source")

		lower := f.do(t, "PATCH", "/api/v1/reports/mine", cy, `{"classification":"public"}`, nil)
		assert.Equal(t, 403, lower.status, string(lower.body))
		assert.Equal(t, "sharing_denied", errField(lower, "code"))
		assert.Equal(t, "classification", errField(lower, "field"))
		assert.Equal(t, 403, f.do(t, "POST", "/api/v1/reports/mine/share", cy, `{"audience":["public"]}`, nil).status,
			"a confidential copy is never public")
		assert.Equal(t, 200, f.do(t, "PATCH", "/api/v1/reports/mine", cy, `{"classification":"restricted"}`, nil).status, "raising is hers")
		assert.Equal(t, 200, f.do(t, "PATCH", "/api/v1/reports/mine", f.memberToken, `{"classification":"internal"}`, nil).status,
			"an owner of the organisation manages the source, so may lower the copy")
		// Her own copy is hers to change.
		assert.Equal(t, 201, f.do(t, "POST", "/api/v1/reports/mine/versions", cy, `{"content":`+jsonString(html("<h1>mine</h1>"))+`}`, nil).status)
		assert.Equal(t, 201, f.do(t, "PUT", "/api/v1/reports/mine/data/kpis", cy, `{"n":1}`, nil).status)

		ev := f.do(t, "GET", "/api/v1/reports/board/evidence", f.agentKey, "", nil)
		require.Equal(t, 200, ev.status, string(ev.body))
		var copied []string
		for _, x := range ev.decoded["timeline"].([]any) {
			if e := x.(map[string]any); e["action"] == "copied" {
				copied = append(copied, e["detail"].(string))
			}
		}
		assert.Equal(t, []string{"copied as mine (" + cp.decoded["id"].(string) + ")"}, copied, "the source's trail records the copy")
	})
}

// TestSendHoldsClassification: a confidential or restricted report is
// sent only to people the organisation knows; an agent key cannot make a
// stranger a guest of one.
func TestSendHoldsClassification(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		f.newMemberToken(t, "cy@example.com", models.RoleMember)
		for _, class := range []string{"confidential", "restricted"} {
			f.publish(t, `{"title":"Pack","slug":"`+class+`","classification":"`+class+`","content":`+jsonString(html("<h1>p</h1>"))+`}`)
			r := f.do(t, "POST", "/api/v1/reports/"+class+"/send", f.agentKey, `{"to":["cy@example.com","new.reader@partner.example"]}`, nil)
			assert.Equal(t, 403, r.status, string(r.body))
			assert.Equal(t, "sharing_denied", errField(r, "code"))
			assert.Equal(t, "to[1]", errField(r, "field"))
			assert.Equal(t, 403, f.do(t, "POST", "/api/v1/reports/"+class+"/send", f.memberToken, `{"to":["new.reader@partner.example"]}`, nil).status,
				"nor a person: an administrator admits the guest first")
			_, err := f.store.GuestByEmail(context.Background(), f.org.ID, "new.reader@partner.example")
			assert.Error(t, err, "nobody was admitted")
		}
		f.publish(t, `{"title":"Note","slug":"internal","content":`+jsonString(html("<h1>n</h1>"))+`}`)
		assert.Equal(t, 202, f.do(t, "POST", "/api/v1/reports/internal/send", f.agentKey, `{"to":["new.reader@partner.example"]}`, nil).status,
			"an internal report may still be sent to a new guest")
	})
}

// TestReportOrigins: an organisation names the other origins its reports
// may reach, each a bare https origin; anything that is not one (a path,
// another scheme, a wildcard for everything, a directive smuggled in) is
// refused naming the entry.
func TestReportOrigins(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		for i, bad := range []string{"https://cdn.example.com/lib.js", "http://cdn.example.com", "javascript:alert(1)",
			"https://cdn.example.com; script-src *", "*", "https://*", "https://user@cdn.example.com", "cdn.example.com", "https://cdn.example.com?x=1"} {
			r := f.do(t, "PATCH", "/api/v1/admin/organization", f.adminKey, `{"reportOrigins":["https://ok.example",`+jsonString(bad)+`]}`, nil)
			assert.Equal(t, 400, r.status, "%d %s: %s", i, bad, r.body)
			assert.Equal(t, "reportOrigins[1]", errField(r, "field"), bad)
		}
		ok := f.do(t, "PATCH", "/api/v1/admin/organization", f.adminKey,
			`{"reportOrigins":["https://cdn.jsdelivr.net","HTTPS://Fonts.Example.com/","https://*.example.com:8443","https://cdn.jsdelivr.net","http://localhost:5173"]}`, nil)
		require.Equal(t, 200, ok.status, string(ok.body))
		assert.Equal(t, []any{"https://cdn.jsdelivr.net", "https://fonts.example.com", "https://*.example.com:8443", "http://localhost:5173"}, ok.decoded["reportOrigins"])
		assert.Equal(t, 403, f.do(t, "PATCH", "/api/v1/admin/organization", f.memberToken, `{"reportOrigins":[]}`, nil).status)
		cleared := f.do(t, "PATCH", "/api/v1/admin/organization", f.adminKey, `{"reportOrigins":[]}`, nil)
		assert.Equal(t, []any{}, cleared.decoded["reportOrigins"])
	})
}
