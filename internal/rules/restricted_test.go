package rules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedactHidesAtEveryDepthAndKeepsTheRest(t *testing.T) {
	raw := `{"amount": 12.50, "ssn": "1", "customer": {"name": "Ada", "ssn": "2", "cards": [{"pan": "4", "ssn": "3"}]}, "note": "ssn"}`
	out, n, err := Redact([]byte(raw), []string{"ssn"})
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, `{"amount":12.50,"customer":{"name":"Ada","cards":[{"pan":"4"}]},"note":"ssn"}`, string(out))

	out, n, err = Redact([]byte(raw), []string{"customer.ssn", "customer.cards.pan"})
	require.NoError(t, err)
	assert.Equal(t, 2, n, "a path hides only there; arrays are looked through")
	assert.Equal(t, `{"amount":12.50,"ssn":"1","customer":{"name":"Ada","cards":[{"ssn":"3"}]},"note":"ssn"}`, string(out))

	out, n, err = Redact([]byte(raw), nil)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, raw, string(out))
}

func TestCheckRestrictedFieldRefusesWhatCanNeverMatch(t *testing.T) {
	for _, ok := range []string{"ssn", "customer.ssn", "a.b.c"} {
		assert.NoError(t, CheckRestrictedField(ok), ok)
	}
	for _, bad := range []string{"", " ", "customer.", ".ssn", "a..b"} {
		assert.Error(t, CheckRestrictedField(bad), bad)
	}
}
