package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

func TestCreateApprovalEscalationValidation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		soon := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		cases := []struct{ name, escalation, code, field string }{
			{"after missing", `{"to":["cy@example.com"]}`, "invalid_request", "escalation.after"},
			{"to missing", `{"after":"4h"}`, "invalid_request", "escalation.to"},
			{"to empty", `{"after":"4h","to":[]}`, "invalid_request", "escalation.to"},
			{"blank person", `{"after":"4h","to":["cy@example.com",""]}`, "invalid_request", "escalation.to[1]"},
			{"after not a duration", `{"after":"soon","to":["cy@example.com"]}`, "invalid_request", "escalation.after"},
			{"after zero", `{"after":0,"to":["cy@example.com"]}`, "invalid_request", "escalation.after"},
			{"after fractional", `{"after":"1.5s","to":["cy@example.com"]}`, "invalid_request", "escalation.after"},
			{"after not before the expiry", `{"after":"2h","to":["cy@example.com"]}`, "invalid_request", "escalation.after"},
			{"unknown person", `{"after":"1h","to":["cy@example.com","nobody@example.com"]}`, "unknown_approver", "escalation.to"},
			{"ambiguous person", `{"after":"1h","to":["ops@example.com"]}`, "ambiguous_approver", "escalation.to[0]"},
			{"unknown field", `{"after":"1h","to":["cy@example.com"],"when":"now"}`, "invalid_request", "escalation.when"},
		}
		for _, tc := range cases {
			r := s.do(t, "POST", "/api/v1/approvals", s.agentKey,
				`{"title":"x","approvers":["bob@example.com"],"expiresAt":"`+soon+`","escalation":`+tc.escalation+`}`, nil)
			assert.Equal(t, 400, r.status, "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.code, errField(r, "code"), "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
		}
		r := s.do(t, "POST", "/api/v1/approvals", s.agentKey,
			`{"title":"x","expiresAt":"`+soon+`","escalation":{"after":7200,"to":["Finance"]}}`, nil)
		assert.Contains(t, errField(r, "message"), "shorter than the time until expiresAt", string(r.body))

		// Seconds and durations are the same escalation; none is null.
		for _, after := range []string{`14400`, `"4h"`, `"240m"`} {
			a := s.create(t, s.agentKey, `{"title":"x","escalation":{"after":`+after+`,"to":["Finance"]}}`)
			assert.Equal(t, map[string]any{"after": float64(14400), "to": []any{"Finance"}, "escalatedAt": nil}, a["escalation"], after)
		}
		plain := s.create(t, s.agentKey, `{"title":"x"}`)
		assert.Contains(t, plain, "escalation")
		assert.Nil(t, plain["escalation"])
	})
}

// TestEscalationAddsApproversOnTheRealStack: an approval still pending one
// second after creation gets Cy as an approver, the read shape and the
// event say so, and Cy can then decide.
func TestEscalationAddsApproversOnTheRealStack(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["bob@example.com"],"escalation":{"after":"1s","to":["cy@example.com"]}}`)
		id := a["id"].(string)
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil).status,
			"Cy is not an approver yet")

		got := s.escalated(t, id)
		assert.Equal(t, "pending", got.decoded["status"])
		emails := emailsOf(got.decoded["resolvedApprovers"])
		assert.Equal(t, []string{"bob@example.com", "cy@example.com"}, emails)
		assert.Equal(t, []any{"bob@example.com"}, got.decoded["approvers"], "approvers keep what the request named")

		evs, err := s.store.ListEvents(context.Background(), s.org.ID, id)
		require.NoError(t, err)
		var kinds []string
		var escalated *models.Event
		for i := range evs {
			kinds = append(kinds, evs[i].Kind)
			if evs[i].Kind == "approval.escalated" {
				escalated = &evs[i]
			}
		}
		require.NotNil(t, escalated, "events: %v", kinds)
		assert.Contains(t, string(escalated.Data), `"email":"cy@example.com"`, "the event's data names the new approvers")

		d := s.do(t, "POST", "/api/v1/approvals/"+id+"/decision", s.cyToken, `{"decision":"approve"}`, nil)
		require.Equal(t, 200, d.status, string(d.body))
		assert.Equal(t, "approved", d.decoded["status"])
		assert.NotNil(t, d.decoded["escalation"].(map[string]any)["escalatedAt"])
	})
}

// TestRuleEscalation: an approval rule's escalation applies to matching
// requests, sooner than the request's own; a later one does not replace it.
func TestRuleEscalation(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		for _, tc := range []struct{ name, body, field string }{
			{"escalation on an ethics rule", `{"name":"a","kind":"ethics","principle":"p","concern":"c","escalation":{"after":"1h","to":["Finance"]}}`, "escalation"},
			{"after", `{"name":"a","kind":"approval","escalation":{"after":"later","to":["Finance"]}}`, "escalation.after"},
			{"to", `{"name":"a","kind":"approval","escalation":{"after":"1h","to":[]}}`, "escalation.to"},
		} {
			r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, tc.body, nil)
			assert.Equal(t, 400, r.status, tc.name)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
		}
		r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey,
			`{"name":"big payments escalate","kind":"approval","condition":"has(request.input.amount) && request.input.amount > 1000","escalation":{"after":"2h","to":["Finance"]}}`, nil)
		require.Equal(t, 201, r.status, string(r.body))
		assert.Equal(t, map[string]any{"after": float64(7200), "to": []any{"Finance"}}, r.decoded["escalation"])
		assert.NotContains(t, r.decoded, "requiredApprovals")

		big := s.create(t, s.agentKey, `{"title":"big","approvers":["bob@example.com"],"input":{"amount":5000}}`)
		assert.Equal(t, map[string]any{"after": float64(7200), "to": []any{"Finance"}, "escalatedAt": nil}, big["escalation"])
		sooner := s.create(t, s.agentKey, `{"title":"big","input":{"amount":5000},"escalation":{"after":"1h","to":["cy@example.com"]}}`)
		assert.Equal(t, float64(3600), sooner["escalation"].(map[string]any)["after"], "the request's own escalation comes sooner")
		later := s.create(t, s.agentKey, `{"title":"big","input":{"amount":5000},"escalation":{"after":"3h","to":["cy@example.com"]}}`)
		assert.Equal(t, float64(7200), later["escalation"].(map[string]any)["after"], "the rule's comes sooner")
		small := s.create(t, s.agentKey, `{"title":"small","input":{"amount":5}}`)
		assert.Nil(t, small["escalation"])

		rec, err := approvals.Records(s.store).Get(context.Background(), s.org.ID, big["id"].(string))
		require.NoError(t, err)
		assert.Equal(t, []string{s.bob.ID, s.cy.ID}, []string(rec.EscalationIDs), "the team resolved at creation")
		assert.True(t, strings.HasPrefix(rec.ID, "apr_"))
	})
}

// escalated waits for approval id's escalation to fire, and is the
// approval as read then.
func (s *stack) escalated(t *testing.T, id string) response {
	t.Helper()
	var got response
	waitFor(t, func() bool {
		got = s.do(t, "GET", "/api/v1/approvals/"+id, s.agentKey, "", nil)
		e, _ := got.decoded["escalation"].(map[string]any)
		return e != nil && e["escalatedAt"] != nil
	})
	return got
}
