package gate

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/rules"
)

// TestSimilarCondition: the condition compiles, holds for the input it was
// built from, and stops holding when a field it names grows or changes.
func TestSimilarCondition(t *testing.T) {
	cases := []struct{ name, input, want string }{
		{"a refund", `{"amount":500,"currency":"EUR","customer":"cus_1","rush":false}`,
			`input.amount <= 500 && input.currency == "EUR" && input.customer == "cus_1" && input.rush == false`},
		{"quotes, backslashes and other scripts", `{"who":"O\"Brien \\ Zoë ✓","tab":"a\tb"}`,
			`input.who == "O\"Brien \\ Zoë ✓" && input.tab == "a\tb"`},
		{"names CEL does not read after a dot", `{"in":1,"line-items":2,"2fa":true,"ok_1":3}`,
			`input["in"] <= 1 && input["line-items"] <= 2 && input["2fa"] == true && input.ok_1 <= 3`},
		{"fractions, exponents, negatives", `{"a":12.5,"b":1e3,"c":-4,"d":-0.25}`,
			`input.a <= 12.5 && input.b <= 1e3 && input.c <= -4 && input.d <= -0.25`},
		{"a whole number beyond CEL's integers", `{"big":12345678901234567890}`, `input.big <= 1.2345678901234567e+19`},
		{"objects, arrays, nulls and prose left out", `{"lines":[1,2],"meta":{"a":1},"gone":null,"why":"one\ntwo","long":"` +
			strings.Repeat("x", 101) + `","short":"` + strings.Repeat("y", 100) + `"}`, `input.short == "` + strings.Repeat("y", 100) + `"`},
		{"nothing flat", `{"lines":[]}`, ``},
		{"not an object", `[1]`, ``},
		{"nothing", ``, ``},
	}
	for _, c := range cases {
		got := SimilarCondition([]byte(c.input))
		assert.Equal(t, c.want, got, c.name)
		if got == "" {
			continue
		}
		require.NoError(t, rules.CheckGate(got), c.name)
		var value map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.input), &value), c.name)
		i, err := rules.FirstGateMatch([]string{got}, value, nil)
		require.NoError(t, err, c.name)
		assert.Equal(t, 0, i, "%s: holds for its own input", c.name)
		for k, v := range value {
			other := map[string]any{}
			for k2, v2 := range value {
				other[k2] = v2
			}
			switch v := v.(type) {
			case float64:
				other[k] = v + 1 + math.Abs(v) // larger, also beyond a double's precision
			case string:
				other[k] = v + "!"
			case bool:
				other[k] = !v
			default:
				continue
			}
			if !strings.Contains(got, `"`+k+`"`) && !strings.Contains(got, "input."+k+" ") {
				continue // left out
			}
			i, err := rules.FirstGateMatch([]string{got}, other, nil)
			require.NoError(t, err, c.name)
			assert.Equal(t, -1, i, "%s: a larger or other %s is not similar", c.name, k)
		}
	}
}
