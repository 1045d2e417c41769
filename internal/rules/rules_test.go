package rules

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	assert.NoError(t, Check(KindApproval, `request.risk == "high"`))
	assert.NoError(t, Check(KindApproval, `has(request.input.amount) && request.input.amount > 1000`))
	assert.ErrorContains(t, Check(KindApproval, `request.risk ==`), "does not compile")
	assert.ErrorContains(t, Check(KindApproval, `request.title + "x"`), "must yield a bool")
	assert.ErrorContains(t, Check(KindApproval, `nosuch.var`), "does not compile")
	// A field request never has would make a rule that never applies.
	assert.ErrorContains(t, Check(KindApproval, `request.inptu.amount > 1000`), "request has no field inptu")
	assert.ErrorContains(t, Check(KindApproval, `has(request.amount) || request["urgent"] == true`), "request has no field amount, urgent")
	assert.NoError(t, Check(KindApproval, `request.input.inptu > 1 && request["metadata"].x == 1 && request.externalId != null`))
}

func TestEvaluate(t *testing.T) {
	rs := []Rule{
		{Name: "big payments", Kind: KindApproval, Condition: `has(request.input.amount) && request.input.amount > 1000`, RequiredApprovals: 2},
		{Name: "critical", Kind: KindApproval, Condition: `request.risk == "critical"`, RequiredApprovals: 3},
		{Name: "personal data", Kind: KindEthics, Condition: `"email" in request.input`, Principle: "privacy", Concern: "sends personal data"},
		{Name: "salary", Kind: KindRestricted, Fields: []string{"salary", "iban"}},
		{Name: "broken", Kind: KindApproval, Condition: `request.input.missing > 1`, RequiredApprovals: 5},
	}
	out := Evaluate(rs, map[string]any{"risk": "high", "input": map[string]any{"amount": 5000.0, "email": "a@b.c"}})
	assert.Equal(t, 2, out.RequiredApprovals)
	require.Len(t, out.Concerns, 1)
	assert.Equal(t, Concern{Principle: "privacy", Rule: "personal data", Concern: "sends personal data"}, out.Concerns[0])
	assert.Equal(t, []string{"salary", "iban"}, out.RestrictedFields)
	assert.Empty(t, out.Unevaluated, "a rule reading a field the request lacks does not apply")

	out = Evaluate(rs, map[string]any{"risk": "critical", "input": map[string]any{}})
	assert.Equal(t, 3, out.RequiredApprovals)
	assert.Empty(t, out.Concerns)

	assert.Equal(t, 1, Evaluate(nil, map[string]any{}).RequiredApprovals)
}

// A sharing rule is about reports: approvals never see it, and it forbids
// the grants its condition matches, failing closed on an error.
func TestSharingRules(t *testing.T) {
	require.NoError(t, Check(KindSharing, "grant.kind == 'public'"))
	assert.Error(t, Check(KindSharing, "request.risk == 'high'"), "sharing rules see report and grant, not request")
	assert.Error(t, Check(KindApproval, "grant.kind == 'public'"))
	rs := []Rule{
		{Name: "never public", Kind: KindSharing, Condition: "grant.kind == 'public'"},
		{Name: "owners only", Kind: KindSharing, Condition: "grant.by.nope == 'x'"},
	}
	out := Evaluate(rs, map[string]any{"risk": "low"})
	assert.Empty(t, out.Unevaluated, "approvals skip sharing rules")
	assert.Equal(t, 1, out.RequiredApprovals)
	report := map[string]any{"classification": "internal"}
	rule, err := Forbids(rs, report, map[string]any{"kind": "public", "by": map[string]any{}})
	assert.Equal(t, "never public", rule)
	assert.NoError(t, err)
	rule, err = Forbids(rs, report, map[string]any{"kind": "team", "by": map[string]any{}})
	assert.Equal(t, "owners only", rule, "a rule that fails to evaluate forbids")
	assert.ErrorContains(t, err, "no such key: nope")
	rule, err = Forbids(rs[:1], report, map[string]any{"kind": "team", "by": map[string]any{}})
	assert.Equal(t, "", rule)
	assert.NoError(t, err)
}

// ruleKinds are a rule of every kind over one amount, for the table below:
// each holds for a number above 1000.
var ruleKinds = []Rule{
	{Name: "big payments", Kind: KindApproval, Condition: `request.input.amount > 1000`, RequiredApprovals: 2},
	{Name: "large sums", Kind: KindEthics, Condition: `request.input.amount > 1000`, Principle: "prudence", Concern: "a large sum"},
	{Name: "bank details", Kind: KindRestricted, Condition: `request.input.amount > 1000`, Fields: []string{"iban"}},
	{Name: "big reports", Kind: KindSharing, Condition: `report.amount > 1000`},
}

// A condition that cannot be evaluated on a value of another type than it
// compares applies, for every kind: the rule fails closed. A field the
// request lacks is not such a value: the rule does not apply.
func TestEveryKindFailsClosedOnAnUnexpectedType(t *testing.T) {
	cases := []struct {
		name, amount string // amount as JSON; "" for absent
		applies      bool
	}{
		{"number above", `5000`, true},
		{"number below", `10`, false},
		{"string", `"5000"`, true},
		{"small string", `"10"`, true},
		{"array", `[5000]`, true},
		{"empty array", `[]`, true},
		{"null", `null`, true},
		{"object", `{"value": 5000}`, true},
		{"bool", `true`, true},
		{"absent", ``, false},
	}
	for _, c := range cases {
		input := map[string]any{"iban": "DE00"}
		if c.amount != "" {
			var v any
			require.NoError(t, json.Unmarshal([]byte(c.amount), &v))
			input["amount"] = v
		}
		for _, r := range ruleKinds[:3] {
			out := Evaluate([]Rule{r}, map[string]any{"risk": "low", "input": input})
			// Only a failure to evaluate is named: a number decides plainly.
			failed := c.applies && c.name != "number above"
			if assert.Equal(t, failed, len(out.Unevaluated) == 1, "%s: %s", r.Kind, c.name) && failed {
				u := out.Unevaluated[0]
				assert.Equal(t, r.Name, u.Rule)
				assert.Contains(t, u.String(), `organisation rule "`+r.Name+`" could not be evaluated on this request (no such overload`)
				assert.Contains(t, u.String(), "so its stricter outcome applies: "+map[string]string{
					KindApproval: "2 approvals", KindEthics: "its concern (a large sum)", KindRestricted: "hidden fields iban"}[r.Kind])
			}
			switch r.Kind {
			case KindApproval:
				assert.Equal(t, map[bool]int{true: 2, false: 1}[c.applies], out.RequiredApprovals, "%s: %s", r.Kind, c.name)
			case KindEthics:
				assert.Equal(t, c.applies, len(out.Concerns) == 1, "%s: %s", r.Kind, c.name)
			case KindRestricted:
				assert.Equal(t, c.applies, slices.Equal(out.RestrictedFields, []string{"iban"}), "%s: %s", r.Kind, c.name)
			}
		}
		// Sharing rules read maps the server builds: there an absent key
		// is the rule's mistake, and forbids too.
		report := map[string]any{"title": "Q3"}
		if c.amount != "" {
			report["amount"] = input["amount"]
		}
		want := ""
		if c.applies || c.name == "absent" {
			want = "big reports"
		}
		got, err := Forbids(ruleKinds[3:], report, map[string]any{"kind": "team"})
		assert.Equal(t, want, got, "sharing: %s", c.name)
		assert.Equal(t, want != "" && c.name != "number above", err != nil, "sharing: %s: %v", c.name, err)
	}
}

// The edges of "cannot be evaluated": has() does not excuse a value of
// another type; a list or a string where an object is read applies, null
// on the way is absent; a key the request's value picks, an item without
// the field inside a comprehension and a condition that no longer
// compiles apply.
func TestWhatFailsClosed(t *testing.T) {
	cases := []struct {
		condition, input string
		applies, named   bool
	}{
		{`has(request.input.amount) && request.input.amount > 1000`, `{"amount": "5000"}`, true, true},
		{`has(request.input.amount) && request.input.amount > 1000`, `{}`, false, false},
		{`request.input.customer.country == "KP"`, `{"customer": [{"country": "KP"}]}`, true, true},
		{`request.input.customer.country == "KP"`, `{"customer": "KP"}`, true, true},
		{`request.input.customer.country == "KP"`, `{"customer": {}}`, false, false},
		{`request.input.customer.country == "KP"`, `{"customer": null}`, false, false},
		{`request.input["customer"].country == "KP"`, `{"customer": {"city": "Paris"}}`, false, false},
		{`request.input.items[1].amount > 10`, `{"items": [{"amount": 1}, {}]}`, false, false},
		{`request.input.items[1].amount > 10`, `{"items": [{"amount": 1}]}`, true, true},
		{`{"EUR": 1, "USD": 1}[request.input.currency] > 0`, `{"currency": "XYZ"}`, true, true},
		{`request.metadata.limits[request.input.currency] > 0`, `{"currency": "XYZ"}`, false, false},
		{`request.input.items.exists(i, i.amount > 1000)`, `{"items": [{"sku": "a"}]}`, true, true},
		{`!has(request.input.amount) && {"EUR": 1}[request.input.currency] > 0`, `{"currency": "XYZ"}`, true, true},
		{`request.input.amount > 1000 || request.risk == "high"`, `{}`, true, false},
		{`request.input.items[0] > 10`, `{"items": []}`, true, true},
		{`request.input.amount > 1000 &&`, `{"amount": 5}`, true, true},
	}
	for _, c := range cases {
		var input any
		require.NoError(t, json.Unmarshal([]byte(c.input), &input))
		out := Evaluate([]Rule{{Name: "r", Kind: KindApproval, Condition: c.condition, RequiredApprovals: 2}},
			map[string]any{"risk": "high", "input": input})
		assert.Equal(t, c.applies, out.RequiredApprovals == 2, "%s on %s", c.condition, c.input)
		assert.Equal(t, c.named, len(out.Unevaluated) == 1, "%s on %s: %v", c.condition, c.input, out.Unevaluated)
	}
	// No input at all is an absent field too.
	out := Evaluate(ruleKinds, map[string]any{"risk": "low", "input": nil})
	assert.Equal(t, 1, out.RequiredApprovals)
	assert.Empty(t, out.Concerns)
	assert.Empty(t, out.RestrictedFields)
	assert.Empty(t, out.Unevaluated)
}

// ==, != and in between values of different kinds are errors, where CEL
// answers false: a rule over amount == 5000 applies to "5000" and [5000]
// (failing closed) as > 1000 does. null compares with anything, as the way
// to ask for a value not sent.
func TestEqualityAcrossKindsFailsClosed(t *testing.T) {
	cases := []struct {
		condition, input string
		applies, named   bool
	}{
		{`request.input.amount == 5000`, `{"amount": 5000}`, true, false},
		{`request.input.amount == 5000`, `{"amount": 5000.0}`, true, false},
		{`request.input.amount == 5000`, `{"amount": 10}`, false, false},
		{`request.input.amount == 5000`, `{"amount": "5000"}`, true, true},
		{`request.input.amount == 5000`, `{"amount": [5000]}`, true, true},
		{`request.input.amount == 5000`, `{"amount": {"v": 5000}}`, true, true},
		{`request.input.amount == 5000`, `{"amount": null}`, false, false},
		{`request.input.amount == 5000`, `{}`, false, false},
		{`request.input.currency != "EUR"`, `{"currency": "EUR"}`, false, false},
		{`request.input.currency != "EUR"`, `{"currency": ["EUR"]}`, true, true},
		{`request.input.currency in ["USD", "GBP"]`, `{"currency": "USD"}`, true, false},
		{`request.input.currency in ["USD", "GBP"]`, `{"currency": "EUR"}`, false, false},
		{`request.input.currency in ["USD", "GBP"]`, `{"currency": ["USD"]}`, true, true},
		{`request.input.currency in ["USD", "GBP"]`, `{"currency": 1}`, true, true},
		{`"email" in request.input`, `{"email": "a@b.c"}`, true, false},
		{`"email" in request.input`, `{"name": "x"}`, false, false},
		{`request.input.tags == ["a"]`, `{"tags": ["a"]}`, true, false},
		{`request.externalId == null`, `{}`, true, false},
		{`request.externalId == "x"`, `{}`, false, false},
		{`request.input.urgent == true`, `{"urgent": "yes"}`, true, true},
	}
	for _, c := range cases {
		var input any
		require.NoError(t, json.Unmarshal([]byte(c.input), &input))
		out := Evaluate([]Rule{{Name: "r", Kind: KindApproval, Condition: c.condition, RequiredApprovals: 2}},
			map[string]any{"risk": "low", "externalId": nil, "input": input})
		assert.Equal(t, c.applies, out.RequiredApprovals == 2, "%s on %s", c.condition, c.input)
		assert.Equal(t, c.named, len(out.Unevaluated) == 1, "%s on %s: %v", c.condition, c.input, out.Unevaluated)
	}
	// The gate's conditions compare the same way: such a rule stops the
	// search, and a person decides.
	i, err := FirstGateMatch([]string{`input.currency == "EUR"`, ``}, map[string]any{"currency": []any{"EUR"}}, nil)
	assert.Equal(t, 0, i)
	assert.Error(t, err)
}

// A key the request spells in another case than the condition does not
// excuse the rule as an absent one does: many executors read AMOUNT as
// amount. The rule applies, failing closed, and says why.
func TestACaseVariantDoesNotExcuse(t *testing.T) {
	for _, condition := range []string{`request.input.amount > 1000`, `has(request.input.amount) && request.input.amount > 1000`} {
		r := Rule{Name: "big payments", Kind: KindApproval, Condition: condition, RequiredApprovals: 2}
		for _, input := range []map[string]any{{"AMOUNT": 5000.0}, {"Amount": 1.0}, {"ext": map[string]any{}, "aMoUnT": "x"}} {
			out := Evaluate([]Rule{r}, map[string]any{"risk": "low", "input": input})
			assert.Equal(t, 2, out.RequiredApprovals, "%s on %v", condition, input)
			if assert.Len(t, out.Unevaluated, 1) {
				assert.Contains(t, out.Unevaluated[0].String(), "request.input.amount is absent but request.input.")
				assert.Contains(t, out.Unevaluated[0].String(), "differs from it only by case")
			}
		}
		out := Evaluate([]Rule{r}, map[string]any{"risk": "low", "input": map[string]any{"currency": "EUR"}})
		assert.Equal(t, 1, out.RequiredApprovals, "an absent field with no variant still excuses")
		assert.Empty(t, out.Unevaluated)
	}
}
