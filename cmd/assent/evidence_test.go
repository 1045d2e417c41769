package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestEvidenceVerify: `assent evidence verify FILE` accepts an export as
// the instance signed it, with or without the published keys, and names
// the entry when one byte of it was changed.
func TestEvidenceVerify(t *testing.T) {
	ctx := context.Background()
	db := testenv.OpenDB(t, "sqlite")
	store := models.NewStore(db, testenv.Keys())
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	by := models.Actor{ID: "key_1", Name: "agent"}
	f, err := store.CreateFlow(ctx, org.ID, "Quarter close", nil, by)
	require.NoError(t, err)
	_, err = store.FinishFlow(ctx, org.ID, f.ID, models.FlowCompleted, by, func(*models.FlowDetail) ([]byte, error) { return []byte(`{}`), nil })
	require.NoError(t, err)
	x, err := (&evidence.Service{Store: store, BaseURL: "http://assent.test"}).Flow(ctx, org.ID, f.ID)
	require.NoError(t, err)
	raw, err := json.Marshal(x)
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "export.json")
	require.NoError(t, os.WriteFile(file, raw, 0o600))

	var out bytes.Buffer
	require.NoError(t, runEvidence(ctx, []string{"verify", file}, &out, io.Discard))
	assert.Contains(t, out.String(), "verifies: 2 timeline entries, signed by "+x.Digest.KeyID)

	k, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)
	keys := filepath.Join(dir, "keys.json")
	require.NoError(t, os.WriteFile(keys, []byte(`{"keys":[{"kid":"`+k.ID+`","x":"`+base64.RawURLEncoding.EncodeToString(k.PublicKey)+`"}]}`), 0o600))
	require.NoError(t, runEvidence(ctx, []string{"verify", file, "--keys", keys}, io.Discard, io.Discard))
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"keys":[{"kid":"evk_other","x":"AAAA"}]}`), 0o600))
	assert.ErrorContains(t, runEvidence(ctx, []string{"verify", file, "--keys", other}, io.Discard, io.Discard), "does not list")

	second := x.Timeline[1]
	tampered := bytes.Replace(raw, []byte(`"action":"`+second.Action+`"`), []byte(`"action":"`+second.Action+`!"`), 1)
	require.NoError(t, os.WriteFile(file, tampered, 0o600))
	err = runEvidence(ctx, []string{"verify", file}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeline[1] (entry "+second.ID)
}
