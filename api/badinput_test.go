package api_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/internal/testenv"
)

// TestBadInputIsRefusedByName: what no store can hold or no reader can
// mean (a NUL character, JSON nested too deep, a number beyond a double, a
// key twice; in an input a token binds, keys that differ only by case and
// integers beyond 2^53) is refused with 400 naming the field, on both
// databases, before any handler or store sees it.
func TestBadInputIsRefusedByName(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		// An action whose schema lets any key through, as the review's did.
		action := f.do(t, "POST", "/api/v1/admin/actions", f.adminKey, `{"name":"pay","inputSchema":{"type":"object"},
			"policy":[{"name":"small","condition":"input.amount <= 50","outcome":"allow"},{"name":"review","outcome":"approval","risk":"medium","approvers":["ada@example.com"]}]}`, nil)
		require.Equal(t, 201, action.status, "body: %s", action.body)
		f.publish(t, `{"title":"Dash","slug":"dash","content":`+jsonString(html("d"))+`}`)
		deep := strings.Repeat(`{"a":`, api.MaxJSONDepth) + "1" + strings.Repeat("}", api.MaxJSONDepth)
		tooDeep := strings.Repeat(`[`, api.MaxJSONDepth-1) + "{}" + strings.Repeat(`]`, api.MaxJSONDepth-1)
		tests := []struct {
			name, method, path, key, body string
			field, msgHas                 string
		}{
			{name: "NUL in title", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay\u0000"}`, field: "title", msgHas: "NUL"},
			{name: "NUL in externalId", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","externalId":"inv\u0000-1"}`, field: "externalId", msgHas: "NUL"},
			{name: "NUL inside input", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"lines":[{"memo":"a"},{"memo":"\u0000"}]}}`, field: "input.lines[1].memo"},
			{name: "NUL inside metadata", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","metadata":{"run":"\u0000"}}`, field: "metadata.run"},
			{name: "NUL in a key", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"a\u0000":1}}`, field: `input.a\x00`},
			{name: "NUL in a collection's title", method: "POST", path: "/api/v1/collections", body: `{"title":"\u0000"}`, field: "title"},
			{name: "bytes that are not UTF-8", method: "POST", path: "/api/v1/approvals", body: "{\"title\":\"pay\",\"input\":{\"memo\":\"\xff\"}}", field: "input.memo", msgHas: "UTF-8"},
			{name: "NUL in a query parameter", method: "GET", path: "/api/v1/approvals?status=%00", field: "status"},
			{name: "a cursor of bytes that are not UTF-8", method: "GET", path: "/api/v1/comments?cursor=tdqblxhfk0mc", field: "cursor"},
			{name: "NUL in a cursor", method: "GET", path: "/api/v1/collections?cursor=a%00", field: "cursor"},
			{name: "not UTF-8 in a query parameter", method: "GET", path: "/api/v1/approvals?status=%FF", field: "status"},
			{name: "NUL in a path id", method: "GET", path: "/api/v1/approvals/apr_%00", field: "id"},
			{name: "NUL in a path id on a POST", method: "POST", path: "/api/v1/approvals/apr_%00/cancel", body: `{}`, field: "id"},
			{name: "NUL in a report slug on a GET", method: "GET", path: "/api/v1/reports/q3%00", field: "idOrSlug"},
			{name: "NUL in a query parameter no operation reads", method: "GET", path: "/api/v1/me?note=%00", field: "note"},
			{name: "a query parameter the operation does not take", method: "GET", path: "/api/v1/approvals?stauts=pending", field: "stauts", msgHas: "unknown query parameter"},
			{name: "a query parameter where none is taken", method: "GET", path: "/api/v1/me?verbose=1", field: "verbose", msgHas: "takes no query parameters"},
			{name: "a query parameter a route with an id does not take", method: "GET", path: "/api/v1/approvals/apr_x?wiat=60s", field: "wiat", msgHas: "takes only wait"},
			{name: "NUL in a report slug", method: "POST", path: "/api/v1/reports/q3%00/share", body: `{"audience":["everyone"]}`, field: "idOrSlug"},
			{name: "NUL in an admin path id", method: "PATCH", path: "/api/v1/admin/members/mem_%00", key: f.adminKey, body: `{"name":"x"}`, field: "id"},
			{name: "too deep", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":` + deep + `}`, field: "input" + strings.Repeat(".a", api.MaxJSONDepth-1), msgHas: "64 levels"},
			{name: "too deep in arrays", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"a":` + tooDeep + `}}`, msgHas: "64 levels"},
			{name: "number beyond a double", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"amount":1e400}}`, field: "input.amount", msgHas: "double"},
			{name: "negative number beyond a double", method: "POST", path: "/api/v1/gate", body: `{"action":"pay","input":{"n":[1,-2e999]}}`, field: "input.n[1]", msgHas: "double"},
			{name: "number beyond a double in a field", method: "POST", path: "/api/v1/collections", body: `{"title":"t","requiredResponses":1e400}`, field: "requiredResponses"},
			{name: "duplicate top-level key", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","title":"refund"}`, field: "title", msgHas: "twice"},
			{name: "unknown field in an array's object", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","links":[{"label":"a","url":"https://x.example","title":"t"}]}`, field: "links[0].title", msgHas: "unknown field"},
			{name: "unknown field in a nested object", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","escalation":{"after":"1h","to":["ada@example.com"],"bogus":1}}`, field: "escalation.bogus", msgHas: "unknown field"},
			{name: "unknown top-level field", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","titel":"t"}`, field: "titel", msgHas: "unknown field"},
			{name: "duplicate key inside input", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"to":"a","x":{"k":1,"k":2}}}`, field: "input.x.k", msgHas: "twice"},
			{name: "duplicate key in an array's object", method: "POST", path: "/api/v1/admin/teams", key: f.adminKey, body: `{"name":"Ops","kind":"team","members":[],"name":"Ops"}`, field: "name"},
			// "" is no value of a field of listed values, though omitempty
			// would pass it as left out.
			{name: "empty role", method: "POST", path: "/api/v1/admin/members", key: f.adminKey, body: `{"email":"e@example.com","role":""}`, field: "role", msgHas: "owner, admin, member"},
			{name: "empty risk", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","risk":""}`, field: "risk", msgHas: "low, medium, high, critical"},
			// Keys equal without regard to case mean one field to Go's and
			// .NET's decoders and two to the hash, rules and budgets.
			{name: "case variant in an approval's input", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"amount":10,"currency":"EUR","Amount":900}}`, field: "input.Amount", msgHas: "only by case"},
			{name: "case variant deep in an input", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"lines":[{"sku":"a"},{"SKU":"b","sku":"c"}]}}`, field: "input.lines[1].sku", msgHas: "only by case"},
			{name: "long s", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"s":1,"ſ":2}}`, field: "input.ſ", msgHas: "only by case"},
			{name: "Kelvin sign", method: "POST", path: "/api/v1/gate", body: "{\"action\":\"pay\",\"input\":{\"k\":1,\"\u212a\":2}}", field: "input.\u212a", msgHas: "only by case"},
			{name: "case variant in a gate check", method: "POST", path: "/api/v1/gate", body: `{"action":"pay","input":{"amount":10,"currency":"EUR","Amount":900}}`, field: "input.Amount", msgHas: "only by case"},
			{name: "case variant spending no budget", method: "POST", path: "/api/v1/gate", body: `{"action":"pay","input":{"amount":0,"Amount":100000}}`, field: "input.Amount", msgHas: "only by case"},
			{name: "case variant in a receipt", method: "POST", path: "/api/v1/receipts", body: receiptBody("x", `{"to":"a","TO":"b"}`, "succeeded", "null"), field: "input.TO", msgHas: "only by case"},
			{name: "case variant in a dataset", method: "PUT", path: "/api/v1/reports/dash/data/d", body: `{"rows":[{"v":1,"V":2}]}`, field: "rows[0].V", msgHas: "only by case"},
			{name: "question ids differing by case", method: "POST", path: "/api/v1/collections", body: `{"title":"t","respondents":["ada@example.com"],"questions":[{"id":"amount","prompt":"a","kind":"number"},{"id":"Amount","prompt":"b","kind":"number"}]}`, field: "questions[1].id", msgHas: "without regard to case"},
			// Integers a double cannot hold would be hashed as their
			// neighbour: 9007199254740993 as 9007199254740992.
			{name: "integer beyond 2^53 in an approval's input", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"acct":9007199254740993}}`, field: "input.acct", msgHas: "as strings"},
			{name: "negative integer beyond 2^53 in a gate check", method: "POST", path: "/api/v1/gate", body: `{"action":"pay","input":{"ids":[1,-9007199254740993]}}`, field: "input.ids[1]", msgHas: "2^53"},
			{name: "integer beyond 2^53 written with an exponent", method: "POST", path: "/api/v1/receipts", body: receiptBody("x", `{"acct":1e16}`, "succeeded", "null"), field: "input.acct", msgHas: "as strings"},
			{name: "integer beyond 2^53 written with a fraction", method: "POST", path: "/api/v1/approvals", body: `{"title":"pay","input":{"acct":9007199254740993.0}}`, field: "input.acct"},
			{name: "empty window in a nested budget", method: "POST", path: "/api/v1/mandates", key: f.memberToken, body: `{"action":"a","expiresAt":"2099-01-01T00:00:00Z","budget":{"count":1,"window":""}}`, field: "budget.window"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				key := tc.key
				if key == "" {
					key = f.agentKey
				}
				r := f.do(t, tc.method, tc.path, key, tc.body, nil)
				require.Equal(t, 400, r.status, "body: %s", r.body)
				assert.Equal(t, "invalid_request", errField(r, "code"))
				if tc.field != "" {
					assert.Equal(t, tc.field, errField(r, "field"), "body: %s", r.body)
				}
				assert.Contains(t, errField(r, "message"), tc.msgHas)
			})
		}

		// 2^53 itself, a big id as a string, keys differing by case in
		// metadata (which no token binds) and big numbers in a dataset
		// (kept as written) stay accepted.
		r := f.do(t, "POST", "/api/v1/gate", f.agentKey, `{"action":"pay","input":{"amount":10,"acct":9007199254740992,"ref":"9007199254740993","neg":-9007199254740992}}`, nil)
		assert.Equal(t, 200, r.status, "body: %s", r.body)
		r = f.do(t, "PUT", "/api/v1/reports/dash/data/d", f.agentKey, `{"id":12345678901234567890}`, nil)
		assert.Equal(t, 201, r.status, "body: %s", r.body)
		r = f.do(t, "POST", "/api/v1/approvals", f.agentKey, `{"title":"pay","approvers":["ada@example.com"],"metadata":{"run":1,"RUN":2},"input":{"amount":1}}`, nil)
		assert.NotEqual(t, 400, r.status, "body: %s", r.body)

		// At the limit, not beyond: the body is read as it always was (the
		// action is unknown).
		for _, input := range []string{deep[len(`{"a":`) : len(deep)-1], `{"n":1.7e308,"tiny":1e-400,"s":"\u2713","k":{"k":1}}`} {
			r := f.do(t, "POST", "/api/v1/gate", f.agentKey, `{"action":"nope","input":`+input+`}`, nil)
			assert.Equal(t, 404, r.status, "body: %s", r.body)
		}
	})
}

// TestExpiresInNamesExpiresAt: the SDKs' expiresIn is not a REST field;
// the API says which one is.
func TestExpiresInNamesExpiresAt(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		for _, path := range []string{"/api/v1/approvals", "/api/v1/collections", "/api/v1/reviews"} {
			r := f.do(t, "POST", path, f.agentKey, `{"title":"pay","expiresIn":3600}`, nil)
			require.Equal(t, 400, r.status, "%s: %s", path, r.body)
			assert.Equal(t, "expiresIn", errField(r, "field"))
			assert.Contains(t, errField(r, "message"), "expiresAt", path)
		}
		// Elsewhere an unknown expiresIn is only unknown.
		r := f.do(t, "POST", "/api/v1/flows", f.agentKey, `{"name":"job","expiresIn":3600}`, nil)
		require.Equal(t, 400, r.status, "body: %s", r.body)
		assert.NotContains(t, errField(r, "message"), "expiresAt")
	})
}

// TestNoFieldsWhereNoneAreTaken: a route whose body the document says is
// empty refuses a field, or a body that is not a JSON object, as every
// other route does, rather than ignoring it (found by the property run).
func TestNoFieldsWhereNoneAreTaken(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		s := newStack(t, db)
		flow := s.do(t, "POST", "/api/v1/flows", s.agentKey, `{"title":"job"}`, nil)
		require.Equal(t, 201, flow.status, string(flow.body))
		path := "/api/v1/flows/" + flow.decoded["id"].(string) + "/cancel"
		r := s.do(t, "POST", path, s.agentKey, `{"reason":"done"}`, nil)
		require.Equal(t, 400, r.status, "body: %s", r.body)
		assert.Equal(t, "reason", errField(r, "field"))
		r = s.do(t, "POST", path, s.agentKey, `"x"`, nil)
		require.Equal(t, 400, r.status, "body: %s", r.body)
		assert.Equal(t, 400, s.do(t, "POST", "/api/v1/uploads", s.agentKey, `{"name":"a.zip"}`, nil).status)
		// An empty object, or no body, is still what the route takes.
		assert.Equal(t, 200, s.do(t, "POST", path, s.agentKey, `{}`, nil).status)
		assert.Equal(t, 201, s.do(t, "POST", "/api/v1/uploads", s.agentKey, ``, nil).status)
	})
}
