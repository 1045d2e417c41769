package secretkey

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSealAtOpensOnlyAtItsPlace(t *testing.T) {
	r, err := Parse(Generate())
	require.NoError(t, err)
	here := Place("slack_integrations", "bot_token", "org_a")
	sealed := r.SealAt("p", here, "xoxb-a")
	assert.True(t, strings.HasPrefix(sealed, "v2."+r.CurrentID()+"."))
	assert.True(t, r.Bound(sealed))

	plain, err := r.OpenAt("p", here, sealed)
	require.NoError(t, err)
	assert.Equal(t, "xoxb-a", plain)

	_, err = r.OpenAt("p", Place("slack_integrations", "bot_token", "org_b"), sealed)
	assert.ErrorIs(t, err, ErrMisplaced, "another row")
	_, err = r.OpenAt("p", Place("slack_integrations", "signing_secret", "org_a"), sealed)
	assert.ErrorIs(t, err, ErrMisplaced, "another column")
	_, err = r.OpenAt("other", here, sealed)
	assert.Error(t, err, "another purpose")
	_, err = r.Open("p", sealed)
	assert.Error(t, err, "a bound value is not read as an unbound one")

	// Parts are length-prefixed: moving a separator changes the place.
	assert.NotEqual(t, Place("ab", "c"), Place("a", "bc"))
	assert.NotEqual(t, Place("a\x00b"), Place("a", "b"))
}

func TestUnboundValuesStillOpen(t *testing.T) {
	r, err := Parse(Generate())
	require.NoError(t, err)
	legacy := r.Seal("p", "secret")
	assert.False(t, r.Bound(legacy), "re-sealing binds it")
	assert.True(t, IsSealedAny(legacy))
	plain, err := r.OpenAt("p", Place("t", "c", "row"), legacy)
	require.NoError(t, err)
	assert.Equal(t, "secret", plain)
	_, err = r.OpenAt("other", Place("t", "c", "row"), legacy)
	assert.Error(t, err, "still bound to its purpose")
	_, err = r.OpenAt("p", nil, "in clear")
	assert.ErrorContains(t, err, "not sealed")
}
