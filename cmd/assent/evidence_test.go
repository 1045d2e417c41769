package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/api"
	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/evidence"
	"github.com/assent-hq/assent/flows"
	"github.com/assent-hq/assent/internal/canonjson"
	"github.com/assent-hq/assent/internal/testenv"
	"github.com/assent-hq/assent/models"
)

// TestEvidenceVerify: `assent evidence verify FILE` accepts an export as
// the instance signed it against the keys the instance publishes, fetched
// (--url) or saved (--keys), refuses without them, and names the entry
// when one byte of it was changed.
func TestEvidenceVerify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.OpenDB(t, "sqlite")
	store := models.NewStore(db, testenv.Keys())
	org, err := store.CreateOrganization(ctx, "Acme", "")
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	svc := app.Build(app.Deps{Store: store, Logger: quiet, BaseURL: "http://assent.test"})
	by := models.Actor{ID: "key_1", Name: "agent", Organization: org}
	f, err := svc.Flows.Create(ctx, by, &flows.CreateInput{Title: "Quarter close"})
	require.NoError(t, err)
	_, err = svc.Flows.Complete(ctx, by, f.ID)
	require.NoError(t, err)
	x, err := svc.Evidence.Flow(ctx, org.ID, f.ID)
	require.NoError(t, err)
	raw, err := json.Marshal(x)
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "export.json")
	require.NoError(t, os.WriteFile(file, raw, 0o600))
	// The instance's own API publishes its keys.
	instance := httptest.NewServer(api.New(api.Deps{Logger: quiet, BaseURL: "http://assent.test", Services: svc.API()}))
	defer instance.Close()

	var out bytes.Buffer
	err = runEvidence(ctx, []string{"verify", file}, &out, io.Discard)
	require.Error(t, err, "without trusted keys nothing verifies")
	assert.ErrorIs(t, err, evidence.ErrNoTrustedKeys)
	assert.Contains(t, err.Error(), "--url")
	assert.Empty(t, out.String())

	require.NoError(t, runEvidence(ctx, []string{"verify", file, "--url", instance.URL}, &out, io.Discard))
	assert.Contains(t, out.String(), "verifies: 2 timeline entries, signed by "+x.Digest.KeyID+", a key of "+instance.URL+"/.well-known/assent/evidence-keys")
	require.NoError(t, runEvidence(ctx, []string{"verify", "--url", instance.URL + "/", file}, io.Discard, io.Discard), "flags before the file")

	k, _, err := store.SigningEvidenceKey(ctx)
	require.NoError(t, err)
	keys := filepath.Join(dir, "keys.json")
	require.NoError(t, os.WriteFile(keys, []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"`+k.ID+`","x":"`+base64.RawURLEncoding.EncodeToString(k.PublicKey)+`"}]}`), 0o600))
	out.Reset()
	require.NoError(t, runEvidence(ctx, []string{"verify", file, "--keys", keys}, &out, io.Discard))
	assert.Contains(t, out.String(), "a key of "+keys)
	otherPublic, _, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	other := filepath.Join(dir, "other.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"evk_other","x":"`+base64.RawURLEncoding.EncodeToString(otherPublic)+`"}]}`), 0o600))
	assert.ErrorContains(t, runEvidence(ctx, []string{"verify", file, "--keys", other}, io.Discard, io.Discard), "not among the trusted keys")
	assert.ErrorContains(t, runEvidence(ctx, []string{"verify", file, "--url", "http://assent.example.com"}, io.Discard, io.Discard), "https",
		"keys fetched in clear from elsewhere could be anyone's")
	assert.Error(t, runEvidence(ctx, []string{"verify", file, "--url", instance.URL, "--keys", keys}, io.Discard, io.Discard), "one source of keys")

	// A forgery: the flow's title changed and the export signed again with
	// an attacker's key, under the instance's key id or one of its own.
	for _, kid := range []string{k.ID, "evk_attacker"} {
		forged := forge(t, raw, kid, func(doc map[string]any) {
			doc["subject"].(map[string]any)["title"] = "Nothing to see"
		})
		require.NoError(t, os.WriteFile(file, forged, 0o600))
		err := runEvidence(ctx, []string{"verify", file}, io.Discard, io.Discard)
		assert.ErrorIs(t, err, evidence.ErrNoTrustedKeys, "the key inside the file is not trusted")
		err = runEvidence(ctx, []string{"verify", file, "--url", instance.URL}, io.Discard, io.Discard)
		require.Error(t, err, "the instance's keys refuse the forgery (%s)", kid)
		assert.Contains(t, err.Error(), "does not verify")
		assert.Error(t, runEvidence(ctx, []string{"verify", file, "--keys", keys}, io.Discard, io.Discard))
	}

	second := x.Timeline[1]
	tampered := bytes.Replace(raw, []byte(`"action":"`+second.Action+`"`), []byte(`"action":"`+second.Action+`!"`), 1)
	require.NoError(t, os.WriteFile(file, tampered, 0o600))
	err = runEvidence(ctx, []string{"verify", file}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeline[1] (entry "+second.ID)

	// Every other way an export can be edited is named: the entries
	// added, removed or reordered, and outside the timeline the part
	// that changed, by its path.
	for _, c := range []struct {
		name, want string
		change     func(doc map[string]any)
	}{
		{"an entry removed", "entriesHash does not match the timeline: an entry was added, removed or reordered", func(doc map[string]any) {
			doc["timeline"] = doc["timeline"].([]any)[:1]
		}},
		{"entries reordered", "an entry was added, removed or reordered", func(doc map[string]any) {
			tl := doc["timeline"].([]any)
			tl[0], tl[1] = tl[1], tl[0]
		}},
		{"the subject's title", "does not match: subject.title was changed", func(doc map[string]any) {
			doc["subject"].(map[string]any)["title"] = "Nothing to see"
		}},
		{"when it was exported", "exportedAt was changed", func(doc map[string]any) { doc["exportedAt"] = "2020-01-01T00:00:00Z" }},
		{"a member added", "note was added", func(doc map[string]any) { doc["note"] = "all fine" }},
		{"a request added", "requests[approval apr_forged].record.title was added", func(doc map[string]any) {
			doc["requests"] = append(doc["requests"].([]any), map[string]any{"type": "approval", "id": "apr_forged", "record": map[string]any{"title": "Pay"}})
		}},
		{"a delivery added", "deliveries[dlv_forged].status was added", func(doc map[string]any) {
			doc["deliveries"] = append(doc["deliveries"].([]any), map[string]any{"id": "dlv_forged", "status": "delivered"})
		}},
		{"the chain's head", "digest.chainHead was changed", func(doc map[string]any) {
			doc["digest"].(map[string]any)["chainHead"].(map[string]any)["position"] = 0
		}},
		{"a field added to the digest", "digest.comment was added", func(doc map[string]any) { doc["digest"].(map[string]any)["comment"] = "x" }},
		{"the parts listed, to hide an edit", "digest.parts was changed: partsSignature does not match it", func(doc map[string]any) {
			doc["subject"].(map[string]any)["title"] = "Nothing to see"
			sum := sha256.Sum256([]byte(`"Nothing to see"`))
			doc["digest"].(map[string]any)["parts"].(map[string]any)["subject.title"] = hex.EncodeToString(sum[:])
		}},
	} {
		require.NoError(t, os.WriteFile(file, edit(t, raw, c.change), 0o600))
		err := runEvidence(ctx, []string{"verify", file, "--keys", keys}, io.Discard, io.Discard)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
		assert.NotContains(t, err.Error(), "something outside the timeline", c.name)
	}
}

// edit changes an export without signing it again.
func edit(t *testing.T, raw []byte, change func(map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	require.NoError(t, d.Decode(&doc))
	change(doc)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// forge changes an export and signs it again with a new key under kid,
// carrying that key, as the instance signs (canonical JSON without the
// signature).
func forge(t *testing.T, raw []byte, kid string, change func(map[string]any)) []byte {
	t.Helper()
	public, private, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	require.NoError(t, d.Decode(&doc))
	change(doc)
	digest := doc["digest"].(map[string]any)
	digest["keyId"], digest["publicKey"] = kid, base64.RawURLEncoding.EncodeToString(public)
	delete(digest, "signature")
	body, err := json.Marshal(doc)
	require.NoError(t, err)
	body, err = canonjson.Canonical(body)
	require.NoError(t, err)
	digest["signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(private, body))
	forged, err := json.Marshal(doc)
	require.NoError(t, err)
	return forged
}
