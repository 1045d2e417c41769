package models_test

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/decisions"
	"github.com/assent-hq/assent/internal/ids"
	"github.com/assent-hq/assent/internal/secretkey"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// keySet is the family's keys as a verifier's JWK set.
func keySet(t *testing.T, s *models.Store, f models.KeyFamily) jose.JSONWebKeySet {
	t.Helper()
	keys, err := s.SigningKeys(context.Background(), f)
	require.NoError(t, err)
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: ed25519.PublicKey(k.PublicKey), KeyID: k.ID, Algorithm: "EdDSA", Use: "sig"})
	}
	return set
}

// TestSignDecision: the store signs with the active decision key, a key
// family apart from the evidence keys; a token signed before a rotation
// still verifies with the keys listed after it.
func TestSignDecision(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		s := models.NewStore(db, testenv.Keys())
		org := testenv.NewOrg(t, s)
		ttl := int64(300)
		org, err := s.UpdateOrganization(ctx, org.ID, models.OrganizationChange{DecisionTokenTTLSeconds: &ttl})
		require.NoError(t, err)

		decided := time.Now().UTC().Truncate(time.Second)
		a := decisions.Approved{ID: "apr_1", OrganizationID: org.ID, Input: []byte(`{"b":[1,2],"a":"x"}`),
			Deciders: []string{"mem_1", "mem_2"}, DecidedAt: decided}
		claims, err := decisions.ForApproval(a, org, "https://assent.example")
		require.NoError(t, err)
		assert.Equal(t, decided.Add(5*time.Minute), claims.Expiry, "the organisation's lifetime")
		token, err := s.SignDecision(ctx, claims)
		require.NoError(t, err)

		evidence, _, err := s.SigningEvidenceKey(ctx)
		require.NoError(t, err)
		decision, _, err := s.ActiveSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)
		assert.True(t, ids.HasPrefix(decision.ID, ids.DecisionKey), decision.ID)
		assert.True(t, ids.HasPrefix(evidence.ID, ids.EvidenceKey), evidence.ID)

		_, err = s.RotateSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)
		v := &decisiontoken.Verifier{Keys: keySet(t, s, models.DecisionFamily), Issuer: "https://assent.example", Organization: org.ID}
		got, err := v.Verify(token, []byte(`{"a":"x","b":[1,2]}`))
		require.NoError(t, err, "signed by the retired key, still listed")
		assert.Equal(t, []string{"mem_1", "mem_2"}, got.Deciders)
		assert.Equal(t, "apr_1", got.Subject)

		// Key separation: the evidence keys do not verify decision tokens.
		v.Keys = keySet(t, s, models.EvidenceFamily)
		_, err = v.Verify(token, []byte(`{"a":"x","b":[1,2]}`))
		assert.ErrorIs(t, err, decisiontoken.ErrUnknownKey)
	})
}

// TestDecisionKeysAreResealed: a rotation of the instance's secret key
// re-seals the decision keys' private halves too.
func TestDecisionKeysAreResealed(t *testing.T) {
	t.Parallel()
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		oldKey, newKey := secretkey.Generate(), secretkey.Generate()
		before := models.NewStore(db, ringOf(t, oldKey))
		k, _, err := before.ActiveSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err)

		_, err = models.NewStore(db, ringOf(t, newKey+","+oldKey)).ResealSecrets(ctx)
		require.NoError(t, err)
		after, _, err := models.NewStore(db, ringOf(t, newKey)).ActiveSigningKey(ctx, models.DecisionFamily)
		require.NoError(t, err, "opens under the new key alone")
		assert.Equal(t, k.ID, after.ID)
	})
}
