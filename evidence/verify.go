package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/assent-hq/assent/internal/canonjson"
	"github.com/assent-hq/assent/models"
)

// Checked is what Verify found good.
type Checked struct {
	Entries int
	KeyID   string
	// PublicKey is the trusted key that signed, base64url.
	PublicKey string
}

// Keys are the evidence keys a verifier trusts, by key id: the instance's
// published set (/.well-known/assent/evidence-keys), fetched or saved.
type Keys map[string]ed25519.PublicKey

// ErrNoTrustedKeys: an export verifies only against keys its reader
// trusts; the public key the file carries proves nothing by itself, since
// whoever edits an export can sign it again with a key of their own.
var ErrNoTrustedKeys = errors.New("no trusted evidence keys: the public key inside the export is not proof that the instance signed it")

// ParseKeys reads a JWK set of Ed25519 keys, as the instance publishes
// them, retired keys included (they signed earlier exports).
func ParseKeys(raw []byte) (Keys, error) {
	var set struct {
		Keys []struct{ Kty, Crv, Kid, X string }
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("not a JWK set: %w", err)
	}
	keys := Keys{}
	for i, k := range set.Keys {
		public, err := base64.RawURLEncoding.DecodeString(k.X)
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Kid == "" || err != nil || len(public) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("keys[%d] is not an Ed25519 key with a kid (kty OKP, crv Ed25519, x)", i)
		}
		keys[k.Kid] = public
	}
	if len(keys) == 0 {
		return nil, errors.New("the JWK set lists no key")
	}
	return keys, nil
}

// Verify checks an export as read from a file, offline: every timeline
// entry's hash against its contents and the hash before it (naming the
// first that fails), the hash over the entries, and the signature over
// the whole export with the trusted key of the id it names, naming what
// changed outside the timeline when it fails (parts.go). The key the
// file carries must be that key; it is never trusted alone.
func Verify(raw []byte, trusted Keys) (*Checked, error) {
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not an evidence export: %w", err)
	}
	var x Export
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, fmt.Errorf("not an evidence export: %w", err)
	}
	for i, e := range x.Timeline {
		at, err := time.Parse(time.RFC3339Nano, e.At.String())
		if err != nil {
			return nil, fmt.Errorf("timeline[%d] (entry %s): %w", i, e.ID, err)
		}
		entry := &models.AuditEntry{ID: e.ID, OrganizationID: e.OrganizationID, FlowID: e.FlowID, SubjectType: e.RequestType,
			SubjectID: e.RequestID, Seq: e.Seq, Action: e.Action, ActorID: e.ActorID, ActorName: e.Actor, Detail: e.Detail,
			At: at, Position: e.Position}
		if models.ChainHash(e.PreviousHash, entry) != e.EntryHash {
			return nil, fmt.Errorf("timeline[%d] (entry %s, position %d): its hash does not match its contents: the entry was changed", i, e.ID, e.Position)
		}
	}
	if EntriesHash(x.Timeline) != x.Digest.EntriesHash {
		return nil, errors.New("digest: entriesHash does not match the timeline: an entry was added, removed or reordered")
	}
	digest, ok := doc["digest"].(map[string]any)
	if !ok {
		return nil, errors.New("the export has no digest")
	}
	delete(digest, "signature")
	body, err := json.Marshal(doc)
	if err == nil {
		body, err = canonjson.Canonical(body)
	}
	if err != nil {
		return nil, err
	}
	if len(trusted) == 0 {
		return nil, ErrNoTrustedKeys
	}
	public, ok := trusted[x.Digest.KeyID]
	if !ok {
		return nil, fmt.Errorf("digest: signed by %q, which is not among the trusted keys", x.Digest.KeyID)
	}
	if carried, err := base64.RawURLEncoding.DecodeString(x.Digest.PublicKey); err != nil || !public.Equal(ed25519.PublicKey(carried)) {
		return nil, fmt.Errorf("digest: the publicKey the export carries is not the trusted key %s", x.Digest.KeyID)
	}
	signature, err := base64.StdEncoding.DecodeString(x.Digest.Signature)
	if err != nil || !ed25519.Verify(public, body, signature) {
		return nil, fmt.Errorf("digest: the signature by %s does not match: %s", x.Digest.KeyID, outsideTimeline(doc, digest, public))
	}
	return &Checked{Entries: len(x.Timeline), KeyID: x.Digest.KeyID, PublicKey: x.Digest.PublicKey}, nil
}
