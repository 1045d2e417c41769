package api_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/approvals"
	"github.com/assent-hq/assent/internal/testenv"
)

func TestOrganisationRules(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		refused := []struct{ name, body, field string }{
			{"condition does not compile", `{"name":"a","kind":"approval","requiredApprovals":2,"condition":"request.risk =="}`, "condition"},
			{"condition not a bool", `{"name":"a","kind":"approval","requiredApprovals":2,"condition":"request.title"}`, "condition"},
			{"condition over a field request lacks", `{"name":"a","kind":"approval","requiredApprovals":2,"condition":"request.amount > 1000"}`, "condition"},
			{"approval rule without count", `{"name":"a","kind":"approval","condition":"true"}`, "requiredApprovals"},
			{"count out of range", `{"name":"a","kind":"approval","requiredApprovals":1}`, "requiredApprovals"},
			{"ethics rule without concern", `{"name":"a","kind":"ethics","principle":"privacy"}`, "concern"},
			{"restricted without fields", `{"name":"a","kind":"restricted"}`, "fields"},
			{"unknown kind", `{"name":"a","kind":"magic"}`, "kind"},
		}
		for _, tc := range refused {
			r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, tc.body, nil)
			assert.Equal(t, 400, r.status, tc.name)
			assert.Equal(t, tc.field, errField(r, "field"), "%s: %s", tc.name, r.body)
		}
		assert.Equal(t, 403, s.do(t, "POST", "/api/v1/admin/rules", s.agentKey, `{"name":"a","kind":"restricted","fields":["x"]}`, nil).status)

		for _, body := range []string{
			`{"name":"big payments","kind":"approval","requiredApprovals":2,"condition":"has(request.input.amount) && request.input.amount > 1000"}`,
			`{"name":"personal data","kind":"ethics","principle":"privacy","concern":"The payment names a private person.","condition":"has(request.input.payee) && request.input.payee.startsWith('Mr')"}`,
			`{"name":"bank details","kind":"restricted","fields":["iban"]}`,
		} {
			r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, body, nil)
			require.Equal(t, 201, r.status, string(r.body))
		}
		assert.Len(t, s.do(t, "GET", "/api/v1/admin/rules", s.adminKey, "", nil).decoded["data"], 3)

		small := s.create(t, s.agentKey, `{"title":"small","approvers":["Finance"],"input":{"amount":10}}`)
		assert.NotContains(t, small, "requiredApprovals", "no rule matched")

		a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["Finance"],
			"input":{"amount":5000,"payee":"Mr Smith","iban":"DE00"},"editableFields":["amount"]}`)
		assert.Equal(t, 2.0, a["requiredApprovals"])
		assert.Equal(t, 0.0, a["approvalsSoFar"])
		assert.Equal(t, []any{map[string]any{"principle": "privacy", "rule": "personal data", "concern": "The payment names a private person."}}, a["concerns"])
		rec, err := approvals.Records(s.store).Get(context.Background(), s.org.ID, a["id"].(string))
		require.NoError(t, err)
		assert.Equal(t, []string{"iban"}, []string(rec.RestrictedFields))

		path := "/api/v1/approvals/" + a["id"].(string) + "/decision"
		r := s.do(t, "POST", path, s.bobToken, `{"decision":"approve","corrections":{"amount":4000}}`, nil)
		assert.Equal(t, 400, r.status, "an ethics concern needs a written reason")
		assert.Equal(t, "reason", errField(r, "field"))
		r = s.do(t, "POST", path, s.bobToken, `{"decision":"approve","reason":"known supplier","corrections":{"amount":4000}}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "pending", r.decoded["status"], "one of two approvals")
		assert.Equal(t, 1.0, r.decoded["approvalsSoFar"])
		r = s.do(t, "POST", path, s.bobToken, `{"decision":"approve","reason":"again"}`, nil)
		assert.Equal(t, 409, r.status, "one person counts once")
		r = s.do(t, "POST", path, s.cyToken, `{"decision":"approve","reason":"fine"}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "approved", r.decoded["status"])
		assert.Equal(t, 2.0, r.decoded["approvalsSoFar"])
		assert.Equal(t, 5000.0, r.decoded["approvedInput"].(map[string]any)["amount"], "several approvers approve the proposal as sent")
		assert.Equal(t, []any{}, r.decoded["changes"])

		// Too few people to reach the count is refused at creation.
		r = s.do(t, "POST", "/api/v1/approvals", s.agentKey, `{"title":"x","approvers":["cy@example.com"],"input":{"amount":5000}}`, nil)
		assert.Equal(t, 400, r.status)
		assert.Equal(t, "approvers", errField(r, "field"))

		// A disabled rule no longer applies; a deleted one is gone.
		rows := s.do(t, "GET", "/api/v1/admin/rules", s.adminKey, "", nil).decoded["data"].([]any)
		big := rows[len(rows)-1].(map[string]any)["id"].(string)
		require.Equal(t, "big payments", rows[len(rows)-1].(map[string]any)["name"])
		r = s.do(t, "PATCH", "/api/v1/admin/rules/"+big, s.adminKey, `{"enabled":false}`, nil)
		require.Equal(t, 200, r.status, string(r.body))
		s.create(t, s.agentKey, `{"title":"x","approvers":["cy@example.com"],"input":{"amount":5000}}`)
		assert.Equal(t, 204, s.do(t, "DELETE", "/api/v1/admin/rules/"+big, s.adminKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "DELETE", "/api/v1/admin/rules/"+big, s.adminKey, "", nil).status)
		assert.Equal(t, 404, s.do(t, "PATCH", "/api/v1/admin/rules/"+big, s.otherAdmin, `{"enabled":true}`, nil).status)
	})
}

// TestRulesFailClosedOnAnUnexpectedType: an amount sent as a string or an
// array cannot be compared by the rules, nor one sent as AMOUNT read, so
// each applies its stricter outcome (two approvals, its concern, its
// hidden field) and the request's timeline says which rule and why; an
// amount absent is not one the rules are about.
func TestRulesFailClosedOnAnUnexpectedType(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		ctx := context.Background()
		for _, body := range []string{
			`{"name":"big payments","kind":"approval","requiredApprovals":2,"condition":"request.input.amount > 1000"}`,
			`{"name":"large sums","kind":"ethics","principle":"prudence","concern":"A large sum leaves the company.","condition":"request.input.amount > 1000"}`,
			`{"name":"bank details","kind":"restricted","fields":["iban"],"condition":"request.input.amount > 1000"}`,
		} {
			r := s.do(t, "POST", "/api/v1/admin/rules", s.adminKey, body, nil)
			require.Equal(t, 201, r.status, string(r.body))
		}
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"payments"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		flowID := flow.decoded["id"].(string)

		// AMOUNT is not an absent amount: many executors read it as one.
		for amount, why := range map[string]string{`"amount":"5000"`: "(no such overload", `"amount":[5000]`: "(no such overload",
			`"AMOUNT":5000`: "(request.input.amount is absent but request.input.AMOUNT differs from it only by case"} {
			a := s.create(t, s.agentKey, `{"title":"Pay","approvers":["Finance"],"flowId":"`+flowID+`","input":{`+amount+`,"iban":"DE00"}}`)
			assert.Equal(t, 2.0, a["requiredApprovals"], amount)
			assert.Equal(t, []any{map[string]any{"principle": "prudence", "rule": "large sums", "concern": "A large sum leaves the company."}}, a["concerns"], amount)
			rec, err := approvals.Records(s.store).Get(ctx, s.org.ID, a["id"].(string))
			require.NoError(t, err)
			assert.Equal(t, []string{"iban"}, []string(rec.RestrictedFields), amount)
			assert.Len(t, a["factors"], 3, "the approvers see each rule that could not be evaluated")

			// The timeline's first entry names each rule and what it applied.
			var created string
			waitFor(t, func() bool {
				for _, e := range s.do(t, "GET", "/api/v1/flows/"+flowID, s.agentKey, "", nil).decoded["timeline"].([]any) {
					entry := e.(map[string]any)
					if entry["subjectId"] == a["id"] && entry["action"] == "created" {
						created = entry["detail"].(string)
						return true
					}
				}
				return false
			})
			assert.Contains(t, created, `organisation rule "big payments" could not be evaluated on this request `+why, amount)
			assert.Contains(t, created, "so its stricter outcome applies: 2 approvals", amount)
			assert.Contains(t, created, `organisation rule "large sums" could not be evaluated`, amount)
			assert.Contains(t, created, `organisation rule "bank details" could not be evaluated`, amount)
			assert.Contains(t, created, "so its stricter outcome applies: hidden fields iban", amount)
		}

		// A number decides plainly; an amount absent leaves the rules out.
		plain := s.create(t, s.agentKey, `{"title":"Pay","approvers":["Finance"],"input":{"amount":5000}}`)
		assert.Equal(t, 2.0, plain["requiredApprovals"])
		assert.Empty(t, plain["factors"])
		none := s.create(t, s.agentKey, `{"title":"Note","approvers":["Finance"],"input":{"note":"no amount"}}`)
		assert.NotContains(t, none, "requiredApprovals")
		assert.Empty(t, none["concerns"])
		assert.Empty(t, none["factors"])
	})
}
