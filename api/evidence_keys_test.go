package api_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/internal/testenv"
)

// TestEvidenceKeys: the instance's first evidence key is made once, even
// by callers racing; its public half is served as a JWK set to anyone, its
// private half is stored sealed; a rotation retires it and keeps it listed.
func TestEvidenceKeys(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		ids := make(chan string, 8)
		for range 8 {
			go func() {
				k, _, err := f.store.SigningEvidenceKey(ctx)
				if err != nil {
					ids <- err.Error()
					return
				}
				ids <- k.ID
			}()
		}
		first := <-ids
		for range 7 {
			assert.Equal(t, first, <-ids, "one active key, whoever asked first")
		}
		k, private, err := f.store.SigningEvidenceKey(ctx)
		require.NoError(t, err)
		signature := ed25519.Sign(private, []byte("digest"))

		r := f.do(t, "GET", "/.well-known/assent/evidence-keys", "", "", nil)
		require.Equal(t, 200, r.status, string(r.body))
		keys := r.decoded["keys"].([]any)
		require.Len(t, keys, 1)
		jwk := keys[0].(map[string]any)
		assert.Equal(t, map[string]any{"kty": "OKP", "crv": "Ed25519", "kid": k.ID, "use": "sig", "alg": "EdDSA"},
			map[string]any{"kty": jwk["kty"], "crv": jwk["crv"], "kid": jwk["kid"], "use": jwk["use"], "alg": jwk["alg"]})
		public, err := base64.RawURLEncoding.DecodeString(jwk["x"].(string))
		require.NoError(t, err)
		assert.True(t, ed25519.Verify(public, []byte("digest"), signature), "the published key checks what the instance signs")
		assert.Nil(t, jwk["retiredAt"])

		var stored string
		require.NoError(t, db.Raw("SELECT private_key FROM evidence_keys WHERE id = ?", k.ID).Scan(&stored).Error)
		assert.NotContains(t, stored, base64.StdEncoding.EncodeToString(private.Seed()), "the private half is sealed at rest")

		next, err := f.store.RotateEvidenceKey(ctx)
		require.NoError(t, err)
		r = f.do(t, "GET", "/.well-known/assent/evidence-keys", "", "", nil)
		keys = r.decoded["keys"].([]any)
		require.Len(t, keys, 2, "a retired key stays listed")
		assert.Equal(t, k.ID, keys[0].(map[string]any)["kid"])
		assert.NotNil(t, keys[0].(map[string]any)["retiredAt"])
		assert.Equal(t, next.ID, keys[1].(map[string]any)["kid"])
		now, _, err := f.store.SigningEvidenceKey(ctx)
		require.NoError(t, err)
		assert.Equal(t, next.ID, now.ID)
	})
}
