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
	// PublicKey is the key that signed, base64url: compare it with the
	// instance's published keys.
	PublicKey string
}

// Verify checks an export as read from a file, offline: every timeline
// entry's hash against its contents and the hash before it (naming the
// first that fails), the hash over the entries, and the signature over
// the whole export with the key it names.
func Verify(raw []byte) (*Checked, error) {
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
	public, err := base64.RawURLEncoding.DecodeString(x.Digest.PublicKey)
	if err != nil || len(public) != ed25519.PublicKeySize {
		return nil, errors.New("digest: publicKey is not an Ed25519 public key")
	}
	signature, err := base64.StdEncoding.DecodeString(x.Digest.Signature)
	if err != nil || !ed25519.Verify(public, body, signature) {
		return nil, fmt.Errorf("digest: the signature by %s does not match: something outside the timeline was changed", x.Digest.KeyID)
	}
	return &Checked{Entries: len(x.Timeline), KeyID: x.Digest.KeyID, PublicKey: x.Digest.PublicKey}, nil
}
