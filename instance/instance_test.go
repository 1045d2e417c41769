package instance_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// temporal answers the health check with err.
type temporal struct {
	client.Client
	err error
}

func (t temporal) CheckHealth(context.Context, *client.CheckHealthRequest) (*client.CheckHealthResponse, error) {
	if t.err != nil {
		return nil, t.err
	}
	return &client.CheckHealthResponse{}, nil
}

func TestReady(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())

		r := instance.New(store.SigningKeyStore, temporal{}).Ready(ctx)
		assert.True(t, r.Ready)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "ok"}, r.Checks)

		r = instance.New(store.SigningKeyStore, nil).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, map[string]string{"database": "ok", "temporal": "down: no client configured"}, r.Checks)

		r = instance.New(store.SigningKeyStore, temporal{err: errors.New("connection refused")}).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Equal(t, "down: connection refused", r.Checks["temporal"])

		require.NoError(t, models.Close(db))
		r = instance.New(store.SigningKeyStore, temporal{}).Ready(ctx)
		assert.False(t, r.Ready)
		assert.Contains(t, r.Checks["database"], "down: ")
		assert.Equal(t, "ok", r.Checks["temporal"])
	})
}

func TestKeySet(t *testing.T) {
	testenv.EachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		store := models.NewStore(db, testenv.Keys())
		svc := instance.New(store.SigningKeyStore, nil)

		evidence, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, evidence, 1, "the family's first key is made when first asked for")
		again, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, again, 1)
		assert.Equal(t, evidence[0].ID, again[0].ID)

		rotated, err := store.RotateSigningKey(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		keys, err := svc.KeySet(ctx, models.EvidenceFamily)
		require.NoError(t, err)
		require.Len(t, keys, 2, "a retired key stays published, for what it signed")
		assert.Equal(t, evidence[0].ID, keys[0].ID)
		assert.NotNil(t, keys[0].RetiredAt)
		assert.Equal(t, rotated.ID, keys[1].ID)
		assert.Nil(t, keys[1].RetiredAt)

		decision, err := svc.KeySet(ctx, models.DecisionFamily)
		require.NoError(t, err)
		require.Len(t, decision, 1, "each family has keys of its own")
		assert.NotEqual(t, evidence[0].ID, decision[0].ID)
	})
}
