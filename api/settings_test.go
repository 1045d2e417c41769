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

// token issues a member token for m.
func (f *fixture) token(t *testing.T, m *models.Member) string {
	t.Helper()
	_, token, err := f.store.CreateMemberToken(context.Background(), f.org.ID, m.ID)
	require.NoError(t, err)
	return token
}

// TestReportSettings: PATCH takes a classification, showViewers or both,
// at least one, from those who manage the report.
func TestReportSettings(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		_, _, bob, _, _ := f.people(t)
		rep := f.publish(t, `{"title":"Plan","slug":"team/plan","content":`+jsonString(html("p"))+`}`)
		assert.Equal(t, false, rep["showViewers"], "off unless turned on")

		both := f.do(t, "PATCH", "/api/v1/reports/team/plan", f.memberToken, `{"classification":"confidential","showViewers":true}`, nil)
		require.Equal(t, 200, both.status, string(both.body))
		assert.Equal(t, "confidential", both.decoded["classification"])
		assert.Equal(t, true, both.decoded["showViewers"])
		assert.Equal(t, []any{}, both.decoded["removedGrants"])
		read := f.do(t, "GET", "/api/v1/reports/team%2Fplan", f.agentKey, "", nil)
		assert.Equal(t, true, read.decoded["showViewers"], "kept")
		off := f.do(t, "PATCH", "/api/v1/reports/team/plan", f.agentKey, `{"showViewers":false}`, nil)
		require.Equal(t, 200, off.status)
		assert.Equal(t, false, off.decoded["showViewers"])
		assert.Equal(t, "confidential", off.decoded["classification"])
		same := f.do(t, "PATCH", "/api/v1/reports/team/plan", f.agentKey, `{"classification":"confidential","showViewers":false}`, nil)
		require.Equal(t, 200, same.status, "a change to what the report already has changes nothing")

		cases := []struct {
			name, key, body string
			status          int
			code, field     string
		}{
			{"nothing to change", f.agentKey, `{}`, 400, "invalid_request", "classification, showViewers"},
			{"showViewers not a boolean", f.agentKey, `{"showViewers":"yes"}`, 400, "invalid_request", "showViewers"},
			{"an unknown classification", f.agentKey, `{"classification":"secret","showViewers":true}`, 400, "invalid_request", "classification"},
			{"a member who does not manage it", f.token(t, bob), `{"showViewers":true}`, 403, "forbidden", ""},
			{"another organisation", f.otherAgent, `{"showViewers":true}`, 404, "not_found", ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := f.do(t, "PATCH", "/api/v1/reports/team/plan", c.key, c.body, nil)
				require.Equal(t, c.status, r.status, string(r.body))
				assert.Equal(t, c.code, errField(r, "code"))
				assert.Equal(t, c.field, errField(r, "field"))
			})
		}
		assert.Equal(t, false, f.do(t, "GET", "/api/v1/reports/team%2Fplan", f.agentKey, "", nil).decoded["showViewers"], "no refused change took")

		var audit []models.AuditEntry
		require.NoError(t, db.Where("organization_id = ? AND subject_id = ?", f.org.ID, rep["id"]).Order("seq").Find(&audit).Error)
		var steps []string
		for _, a := range audit[1:] {
			steps = append(steps, a.Action+": "+a.Detail)
		}
		assert.Equal(t, []string{"reclassified: internal → confidential; viewers shown", "viewers hidden: "}, steps,
			"one audit entry a change, none for what changed nothing")
	})
}
