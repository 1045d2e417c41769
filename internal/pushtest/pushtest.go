// Package pushtest stands in, in tests, for a browser vendor's Web Push
// service and for the browser behind it: Subscribe makes a subscription
// as a browser does (a fresh P-256 key pair and a random 16-byte auth
// secret), the Service records what is pushed to it, Decrypt opens a push
// with the subscription's keys (RFC 8291, aes128gcm content coding, RFC
// 8188) and VerifyVAPID checks its Authorization header (RFC 8292).
package pushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Service is a local push service: every POST to a subscription's
// endpoint is recorded and answered with the status queued for that
// endpoint (201 when none is).
type Service struct {
	// URL is the service's origin, http://127.0.0.1:<port>.
	URL     string
	mu      sync.Mutex
	pushes  []Push
	answers map[string][]int
}

// Push is one request the service received.
type Push struct {
	Endpoint string
	Header   http.Header
	Body     []byte
	// Status is what the service answered.
	Status int
}

// New starts a service, stopped when the test ends.
func New(t testing.TB) *Service {
	s := &Service{answers: map[string][]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	endpoint := s.URL + r.URL.Path
	s.mu.Lock()
	status := http.StatusCreated
	if q := s.answers[endpoint]; len(q) > 0 {
		status, s.answers[endpoint] = q[0], q[1:]
	}
	s.pushes = append(s.pushes, Push{Endpoint: endpoint, Header: r.Header.Clone(), Body: body, Status: status})
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		status = http.StatusMethodNotAllowed
	}
	w.WriteHeader(status)
}

// Answer queues the statuses the service answers b's next pushes with, in
// order; after them it answers 201 again.
func (s *Service) Answer(b *Browser, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[b.Endpoint] = append(s.answers[b.Endpoint], statuses...)
}

// Pushes returns every push received so far, the oldest first.
func (s *Service) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Push(nil), s.pushes...)
}

// To returns the pushes received for b, the oldest first.
func (s *Service) To(b *Browser) []Push {
	var out []Push
	for _, p := range s.Pushes() {
		if p.Endpoint == b.Endpoint {
			out = append(out, p)
		}
	}
	return out
}

// Browser is one subscription, with the private key and secret only the
// browser knows.
type Browser struct {
	// Endpoint, P256dh and Auth are what the browser's PushSubscription
	// gives the page: the endpoint, the public key (uncompressed point)
	// and the auth secret, both base64url without padding.
	Endpoint string
	P256dh   string
	Auth     string
	key      *ecdh.PrivateKey
	auth     []byte
}

// Subscribe makes a new subscription at the service.
func (s *Service) Subscribe(t testing.TB) *Browser {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth, id := make([]byte, 16), make([]byte, 12)
	_, _ = rand.Read(auth)
	_, _ = rand.Read(id)
	return &Browser{Endpoint: s.URL + "/push/" + base64.RawURLEncoding.EncodeToString(id),
		P256dh: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()),
		Auth:   base64.RawURLEncoding.EncodeToString(auth), key: key, auth: auth}
}

// Decrypt opens a push's body as the browser does (RFC 8291 section 3.4,
// one aes128gcm record as RFC 8188 lays it out) and returns the message.
func (b *Browser) Decrypt(body []byte) ([]byte, error) {
	// Header: salt (16), record size (4), key id length (1), key id (the
	// application server's one-off public key).
	if len(body) < 21 {
		return nil, errors.New("shorter than the content coding header")
	}
	salt, rs, idLen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idLen {
		return nil, errors.New("shorter than the header's key id")
	}
	serverKey, ciphertext := body[21:21+idLen], body[21+idLen:]
	if rs < 18 || len(ciphertext) > int(rs) {
		return nil, fmt.Errorf("one record expected: record size %d, %d bytes", rs, len(ciphertext))
	}
	asPublic, err := ecdh.P256().NewPublicKey(serverKey)
	if err != nil {
		return nil, fmt.Errorf("the key id is not a P-256 point: %w", err)
	}
	shared, err := b.key.ECDH(asPublic)
	if err != nil {
		return nil, err
	}
	// IKM = HKDF(auth secret, ECDH secret, "WebPush: info" || 0 || ua_public || as_public)
	info := append(append([]byte("WebPush: info\x00"), b.key.PublicKey().Bytes()...), serverKey...)
	ikm, err := hkdf.Key(sha256.New, shared, b.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("does not open with the subscription's keys: %w", err)
	}
	// The last record ends with 0x02 then zero padding.
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("the record lacks the last record's delimiter")
	}
	return plain[:end], nil
}

// Claims are a VAPID token's claims.
type Claims struct {
	Aud string `json:"aud"`
	Exp int64  `json:"exp"`
	Sub string `json:"sub"`
}

// VerifyVAPID checks a push's Authorization header, "vapid t=<JWT>,
// k=<public key>": k is publicKey (base64url), the JWT is ES256 signed by
// it, its aud is audience (the push service's origin), it expires after
// now and within 24 hours (RFC 8292 section 2), and it names a contact.
func VerifyVAPID(header http.Header, publicKey, audience string, now time.Time) (Claims, error) {
	var c Claims
	auth, ok := strings.CutPrefix(header.Get("Authorization"), "vapid ")
	if !ok {
		return c, fmt.Errorf("authorization %q is not the vapid scheme", header.Get("Authorization"))
	}
	params := map[string]string{}
	for _, p := range strings.Split(auth, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	if params["k"] != strings.TrimRight(publicKey, "=") {
		return c, fmt.Errorf("k=%s is not the server's public key %s", params["k"], publicKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return c, errors.New("k is not base64url")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return c, fmt.Errorf("k is not an uncompressed P-256 point: %w", err)
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		return c, errors.New("t is not a JWT")
	}
	var head struct{ Alg, Typ string }
	if err := decodeJSON(parts[0], &head); err != nil || head.Alg != "ES256" {
		return c, fmt.Errorf("the JWT's alg is %q, not ES256", head.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return c, errors.New("the JWT's signature is not 64 bytes (r || s)")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return c, errors.New("the JWT's signature does not verify with the server's public key")
	}
	if err := decodeJSON(parts[1], &c); err != nil {
		return c, err
	}
	exp := time.Unix(c.Exp, 0)
	switch {
	case c.Aud != audience:
		return c, fmt.Errorf("aud %q is not the push service's origin %q", c.Aud, audience)
	case !exp.After(now) || exp.After(now.Add(24*time.Hour)):
		return c, fmt.Errorf("exp %s is not within the next 24 hours", exp)
	case !strings.HasPrefix(c.Sub, "mailto:") && !strings.HasPrefix(c.Sub, "https://"):
		return c, fmt.Errorf("sub %q is neither a mailto: nor an https: URL", c.Sub)
	}
	return c, nil
}

func decodeJSON(part string, into any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}
