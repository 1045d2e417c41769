package evidence

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/assent-hq/assent/internal/canonjson"
)

// The digest itemises what lies outside the timeline, so a verifier can
// name what changed there: `parts` is the SHA-256 of each part in
// canonical JSON, by its path (`subject.title`, `exportedAt`,
// `requests[approval apr_…].record.title`, `requests[report rpt_…].versions`,
// `deliveries[dlv_…].status`, `digest.chainHead`, `digest.algorithm`), and `partsSignature`
// signs `parts` alone with the same key. The whole export's signature
// still decides; parts only explain a failure. Both are computed from
// the export as a generic JSON document, so the signer and the verifier
// read the same thing.

// Parts are the hashes of doc's parts outside the timeline, by path.
func Parts(doc map[string]any) (map[string]string, error) {
	parts := map[string]string{}
	add := func(path string, v any) error {
		b, err := canonjson.Encode(v)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		sum := sha256.Sum256(b)
		parts[path] = hex.EncodeToString(sum[:])
		return nil
	}
	// fields adds each field of an object, or the value whole when it
	// is not one.
	fields := func(path string, v any) error {
		obj, ok := v.(map[string]any)
		if !ok {
			return add(path, v)
		}
		for k, f := range obj {
			if err := add(path+"."+k, f); err != nil {
				return err
			}
		}
		return nil
	}
	for key, v := range doc {
		switch key {
		case "timeline":
			// Checked entry by entry and by entriesHash.
		case "digest":
			if d, ok := v.(map[string]any); ok {
				for _, k := range []string{"algorithm", "chainHead"} {
					if err := add("digest."+k, d[k]); err != nil {
						return nil, err
					}
				}
			}
		case "requests":
			for i, r := range asList(v) {
				req, ok := r.(map[string]any)
				if !ok {
					if err := add(fmt.Sprintf("requests[%d]", i), r); err != nil {
						return nil, err
					}
					continue
				}
				path := fmt.Sprintf("requests[%v %v]", req["type"], req["id"])
				for k, f := range req {
					var err error
					switch k {
					case "type", "id":
						// Named by the path.
					case "record":
						err = fields(path+".record", f)
					default:
						err = add(path+"."+k, f)
					}
					if err != nil {
						return nil, err
					}
				}
			}
		case "deliveries":
			for i, d := range asList(v) {
				del, ok := d.(map[string]any)
				if !ok {
					if err := add(fmt.Sprintf("deliveries[%d]", i), d); err != nil {
						return nil, err
					}
					continue
				}
				path := fmt.Sprintf("deliveries[%v]", del["id"])
				for k, f := range del {
					if k == "id" {
						continue
					}
					if err := add(path+"."+k, f); err != nil {
						return nil, err
					}
				}
			}
		default:
			if err := fields(key, v); err != nil {
				return nil, err
			}
		}
	}
	return parts, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// changedParts says which parts of signed differ in now: changed, added
// or removed, sorted by path.
func changedParts(signed map[string]any, now map[string]string) []string {
	var out []string
	for path, h := range now {
		was, ok := signed[path]
		switch {
		case !ok:
			out = append(out, path+" was added")
		case was != h:
			out = append(out, path+" was changed")
		}
	}
	for path := range signed {
		if _, ok := now[path]; !ok {
			out = append(out, path+" was removed")
		}
	}
	sort.Strings(out)
	return out
}

// maxNamed bounds the parts one refusal names.
const maxNamed = 10

// nameChanges joins the changes found, at most maxNamed of them.
func nameChanges(changes []string) string {
	if len(changes) <= maxNamed {
		return strings.Join(changes, "; ")
	}
	return strings.Join(changes[:maxNamed], "; ") + fmt.Sprintf("; and %d more", len(changes)-maxNamed)
}

// knownDigest are the digest's own fields: any other was added.
var knownDigest = []string{"algorithm", "keyId", "publicKey", "entriesHash", "chainHead", "parts", "partsSignature", "signature"}

// unknownDigestFields names fields added to the digest.
func unknownDigestFields(digest map[string]any) []string {
	var out []string
	for k := range digest {
		if !slices.Contains(knownDigest, k) {
			out = append(out, "digest."+k+" was added")
		}
	}
	sort.Strings(out)
	return out
}

// outsideTimeline names what changed outside the timeline of doc, whose
// whole signature by public failed: the parts whose hashes differ from
// those the digest lists, once partsSignature shows that list is the
// instance's; else that the list itself was changed.
func outsideTimeline(doc, digest map[string]any, public []byte) string {
	if extra := unknownDigestFields(digest); len(extra) > 0 {
		return nameChanges(extra)
	}
	signed, ok := digest["parts"].(map[string]any)
	sig, _ := digest["partsSignature"].(string)
	if !ok || sig == "" {
		return "something outside the timeline was changed (the export lists no parts to say what: digest.parts is missing)"
	}
	listed, err := canonjson.Encode(signed)
	signature, sigErr := base64.StdEncoding.DecodeString(sig)
	if err != nil || sigErr != nil || !ed25519.Verify(public, listed, signature) {
		return "digest.parts was changed: partsSignature does not match it"
	}
	now, err := Parts(doc)
	if err != nil {
		return "something outside the timeline was changed"
	}
	if changes := changedParts(signed, now); len(changes) > 0 {
		return nameChanges(changes)
	}
	return "digest.partsSignature was changed"
}
