package secretkey

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// boundPrefix marks a value sealed bound to its place (SealAt): the
// place is the AES-GCM associated data, so the value opens only where it
// was sealed. "v1." values (Seal) are bound to their purpose only.
const boundPrefix = "v2."

// Place names where a value is stored, e.g. its table, column and row
// key, as SealAt and OpenAt take it. Each part is length-prefixed, so no
// two lists of parts give the same place.
func Place(parts ...string) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// SealAt seals plain for purpose under the current key, bound to place:
// "v2.<key id>.<base64>".
func (r *Ring) SealAt(purpose string, place []byte, plain string) string {
	k := r.keys[0]
	a := k.aead(purpose)
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plain)+a.Overhead())
	rand.Read(nonce)
	return boundPrefix + k.id + "." + base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, []byte(plain), place))
}

// OpenAt opens a value SealAt sealed for purpose at place. A value sealed
// before values were bound (v1, Seal) opens as Open does, wherever it is
// stored: re-sealing binds it (see Bound).
func (r *Ring) OpenAt(purpose string, place []byte, value string) (string, error) {
	id, data, ok := strings.Cut(strings.TrimPrefix(value, boundPrefix), ".")
	if !strings.HasPrefix(value, boundPrefix) || !ok {
		return r.Open(purpose, value)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return "", errors.New("sealed value is not base64")
	}
	k := r.find(id)
	if k == nil {
		return "", fmt.Errorf("key %s: %w", id, ErrUnknownKey)
	}
	a := k.aead(purpose)
	if len(sealed) < a.NonceSize()+a.Overhead() {
		return "", errors.New("sealed value is truncated")
	}
	plain, err := a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], place)
	if err != nil {
		return "", fmt.Errorf("sealed value does not open under key %s: %w", id, ErrMisplaced)
	}
	return string(plain), nil
}

// ErrMisplaced is returned for a bound value that does not open where it
// is read: changed, or copied from another row or column.
var ErrMisplaced = errors.New("it was changed, or copied from another row or column")

// Bound reports whether value was sealed by SealAt under the current key:
// re-sealing skips those and seals again the rest (older keys, v1 values,
// values in clear).
func (r *Ring) Bound(value string) bool {
	id, _, ok := strings.Cut(strings.TrimPrefix(value, boundPrefix), ".")
	return ok && strings.HasPrefix(value, boundPrefix) && id == r.CurrentID()
}

// IsSealedAny reports whether value is sealed in either format, bound or
// not.
func IsSealedAny(value string) bool {
	return strings.HasPrefix(value, boundPrefix) || IsSealed(value)
}
