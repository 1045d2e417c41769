package secretkey

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSealOpens(t *testing.T) {
	r, err := Parse(Generate())
	require.NoError(t, err)
	sealed := r.Seal("webhook_endpoints.secret", "asnt_whs_secret")
	assert.NotContains(t, sealed, "asnt_whs_secret")
	assert.True(t, strings.HasPrefix(sealed, "v1."+r.CurrentID()+"."))
	assert.NotEqual(t, sealed, r.Seal("webhook_endpoints.secret", "asnt_whs_secret"), "each seal has its own nonce")

	plain, err := r.Open("webhook_endpoints.secret", sealed)
	require.NoError(t, err)
	assert.Equal(t, "asnt_whs_secret", plain)

	_, err = r.Open("approvals.callback_secret", sealed)
	assert.Error(t, err, "a value sealed for one purpose never opens as another")
	_, err = r.Open("webhook_endpoints.secret", "asnt_whs_secret")
	assert.ErrorContains(t, err, "not sealed")
	tampered := sealed[:len(sealed)-2] + "AA"
	_, err = r.Open("webhook_endpoints.secret", tampered)
	assert.Error(t, err)
}

func TestRotation(t *testing.T) {
	oldKey, newKey := Generate(), Generate()
	old, err := Parse(oldKey)
	require.NoError(t, err)
	sealed := old.Seal("p", "secret")

	// The new key listed second: everything still opens, old still seals.
	both, err := Parse(oldKey + "," + newKey)
	require.NoError(t, err)
	assert.Equal(t, old.CurrentID(), both.CurrentID())

	// The new key first: it seals, the old key still opens.
	rotated, err := Parse(newKey + ", " + oldKey)
	require.NoError(t, err)
	assert.False(t, rotated.SealedUnderCurrent(sealed))
	plain, err := rotated.Open("p", sealed)
	require.NoError(t, err)
	assert.Equal(t, "secret", plain)
	assert.True(t, rotated.SealedUnderCurrent(rotated.Seal("p", plain)))

	// The old key dropped: its values no longer open, and say why.
	only, err := Parse(newKey)
	require.NoError(t, err)
	_, err = only.Open("p", sealed)
	assert.ErrorIs(t, err, ErrUnknownKey)
}

func TestParseRefuses(t *testing.T) {
	for _, bad := range []string{"", " , ", "not base64!", "c2hvcnQ=", Generate() + "," + "c2hvcnQ="} {
		_, err := Parse(bad)
		assert.Error(t, err, bad)
		assert.ErrorContains(t, err, Env)
	}
	k := Generate()
	_, err := Parse(k + "," + k)
	assert.ErrorContains(t, err, "twice")
}

func TestLoadOrCreateKeepsTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "secret.key")
	first, err := LoadOrCreate(path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	again, err := LoadOrCreate(path)
	require.NoError(t, err)
	assert.Equal(t, first.CurrentID(), again.CurrentID())
}

func TestDeriveIsPerPurpose(t *testing.T) {
	r, err := Parse(Generate())
	require.NoError(t, err)
	assert.Len(t, r.Derive("csrf"), 32)
	assert.Equal(t, r.Derive("csrf"), r.Derive("csrf"))
	assert.NotEqual(t, r.Derive("csrf"), r.Derive("other"))
}
