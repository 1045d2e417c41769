// Package secretkey holds the instance secret key (ASSENT_SECRET_KEY) and
// seals with it what the service must keep but never show in clear: the
// secrets in the database, Temporal payloads, signed tokens.
//
// A ring is one or more 32-byte keys. The first seals; every key opens, so
// a key can be rotated in without downtime: add the new key second, make it
// first, re-seal (assent admin rotate-secret-key), then drop the old one.
// Each key is known by an id derived from it, written beside each value it
// sealed. Each purpose (a column, Temporal payloads) gets its own subkey,
// so a value sealed for one purpose never opens as another.
package secretkey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Env is the environment variable that holds the ring.
const Env = "ASSENT_SECRET_KEY"

// keySize is AES-256's.
const keySize = 32

// sealedPrefix marks a sealed string, with the format's version.
const sealedPrefix = "v1."

// Ring is the instance's keys: Current seals, all open.
type Ring struct {
	keys []*key
}

type key struct {
	id       string
	material []byte
	mu       sync.Mutex
	aeads    map[string]cipher.AEAD
}

// Parse reads a ring: base64 keys of 32 bytes separated by commas, the
// current key first.
func Parse(s string) (*Ring, error) {
	r := &Ring{}
	seen := map[string]bool{}
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		material, err := decodeKey(part)
		if err != nil {
			return nil, fmt.Errorf("%s: key %d: %w", Env, i+1, err)
		}
		k := newKey(material)
		if seen[k.id] {
			return nil, fmt.Errorf("%s: key %d is listed twice", Env, i+1)
		}
		seen[k.id] = true
		r.keys = append(r.keys, k)
	}
	if len(r.keys) == 0 {
		return nil, fmt.Errorf("%s is empty: set it to a random 32-byte key in base64 (openssl rand -base64 32)", Env)
	}
	return r, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != keySize {
				return nil, fmt.Errorf("is %d bytes, must be %d (openssl rand -base64 32)", len(b), keySize)
			}
			return b, nil
		}
	}
	return nil, errors.New("is not base64 (openssl rand -base64 32 makes one)")
}

func newKey(material []byte) *key {
	sum := sha256.Sum256(append([]byte("assent key id\x00"), material...))
	return &key{id: hex.EncodeToString(sum[:4]), material: material, aeads: map[string]cipher.AEAD{}}
}

// Generate returns a new random key, encoded as Parse reads it.
func Generate() string {
	b := make([]byte, keySize)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// LoadOrCreate reads the ring kept in path, creating the file with a new
// key when it does not exist: how `assent dev` keeps its key in the data
// directory.
func LoadOrCreate(path string) (*Ring, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		b = []byte(Generate() + "\n")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	r, err := Parse(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// CurrentID is the id of the key that seals.
func (r *Ring) CurrentID() string { return r.keys[0].id }

func (r *Ring) find(id string) *key {
	for _, k := range r.keys {
		if k.id == id {
			return k
		}
	}
	return nil
}

// aead is k's cipher for purpose, made once.
func (k *key) aead(purpose string) cipher.AEAD {
	k.mu.Lock()
	defer k.mu.Unlock()
	if a, ok := k.aeads[purpose]; ok {
		return a
	}
	sub, err := hkdf.Key(sha256.New, k.material, nil, "assent/"+purpose, keySize)
	if err != nil {
		panic(err) // only for lengths HKDF cannot give
	}
	block, err := aes.NewCipher(sub)
	if err != nil {
		panic(err)
	}
	a, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	k.aeads[purpose] = a
	return a
}

// Encrypt seals plain for purpose under the current key, returning that
// key's id and the nonce followed by the ciphertext.
func (r *Ring) Encrypt(purpose string, plain []byte) (keyID string, sealed []byte) {
	return r.EncryptBound(purpose, plain, nil)
}

// EncryptBound is Encrypt with associated data: what the value is bound
// to, which DecryptBound must be given again for it to open.
func (r *Ring) EncryptBound(purpose string, plain, associated []byte) (keyID string, sealed []byte) {
	k := r.keys[0]
	a := k.aead(purpose)
	nonce := make([]byte, a.NonceSize(), a.NonceSize()+len(plain)+a.Overhead())
	rand.Read(nonce)
	return k.id, a.Seal(nonce, nonce, plain, associated)
}

// ErrUnknownKey is returned for a value sealed under a key the ring lacks.
var ErrUnknownKey = errors.New("sealed under a key this instance does not have (is the old key still in " + Env + "?)")

// Decrypt opens what Encrypt sealed for purpose under key keyID.
func (r *Ring) Decrypt(purpose, keyID string, sealed []byte) ([]byte, error) {
	return r.DecryptBound(purpose, keyID, sealed, nil)
}

// DecryptBound opens what EncryptBound sealed with the same associated
// data; any other refuses.
func (r *Ring) DecryptBound(purpose, keyID string, sealed, associated []byte) ([]byte, error) {
	k := r.find(keyID)
	if k == nil {
		return nil, fmt.Errorf("key %s: %w", keyID, ErrUnknownKey)
	}
	a := k.aead(purpose)
	if len(sealed) < a.NonceSize()+a.Overhead() {
		return nil, errors.New("sealed value is truncated")
	}
	plain, err := a.Open(nil, sealed[:a.NonceSize()], sealed[a.NonceSize():], associated)
	if err != nil {
		return nil, fmt.Errorf("sealed value does not open under key %s: it was changed, or sealed for another purpose or use", keyID)
	}
	return plain, nil
}

// Seal is Encrypt for a text column: "v1.<key id>.<base64>".
func (r *Ring) Seal(purpose, plain string) string {
	id, sealed := r.Encrypt(purpose, []byte(plain))
	return sealedPrefix + id + "." + base64.RawURLEncoding.EncodeToString(sealed)
}

// Open reads what Seal wrote. A value that is not sealed is refused.
func (r *Ring) Open(purpose, value string) (string, error) {
	id, data, ok := split(value)
	if !ok {
		return "", errors.New("value is not sealed")
	}
	sealed, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil {
		return "", errors.New("sealed value is not base64")
	}
	plain, err := r.Decrypt(purpose, id, sealed)
	return string(plain), err
}

// SealedUnderCurrent reports whether value was sealed under the current key,
// so re-sealing after a rotation skips what is already done.
func (r *Ring) SealedUnderCurrent(value string) bool {
	id, _, ok := split(value)
	return ok && id == r.CurrentID()
}

// IsSealed reports whether value is in Seal's format, under any key.
func IsSealed(value string) bool {
	_, _, ok := split(value)
	return ok
}

func split(value string) (id, data string, ok bool) {
	rest, ok := strings.CutPrefix(value, sealedPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ".")
}

// Derive returns a 32-byte key for purpose from the current key, for MACs
// such as signed tokens. It changes when the current key does.
func (r *Ring) Derive(purpose string) []byte {
	sub, err := hkdf.Key(sha256.New, r.keys[0].material, nil, "assent/derive/"+purpose, keySize)
	if err != nil {
		panic(err)
	}
	return sub
}

// IDs are the ids of the ring's keys, the current key's first. An id is
// written in clear beside every value a key seals, and names the key
// without revealing it.
func (r *Ring) IDs() []string {
	ids := make([]string, len(r.keys))
	for i, k := range r.keys {
		ids[i] = k.id
	}
	return ids
}

// Has reports whether the ring holds the key with id.
func (r *Ring) Has(id string) bool { return r.find(id) != nil }
