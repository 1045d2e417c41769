package decisiontoken

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var decidedAt = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

const input = `{"amount":80,"currency":"EUR","lines":[{"sku":"A-1","qty":2}]}`

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, private, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return private
}

func publicJWK(key ed25519.PrivateKey, kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: key.Public(), KeyID: kid, Algorithm: string(jose.EdDSA), Use: "sig"}
}

func claims(t *testing.T) Claims {
	t.Helper()
	sum, err := InputSHA256([]byte(input))
	require.NoError(t, err)
	return Claims{Issuer: "https://assent.example", Subject: "apr_1", Organization: "org_1", InputSHA256: sum,
		Deciders: []string{"mem_1"}, IssuedAt: decidedAt, Expiry: decidedAt.Add(time.Hour)}
}

// encode builds a compact JWS by hand, for what Sign would never make.
func encode(header, payload string, signature []byte) string {
	b := base64.RawURLEncoding
	return b.EncodeToString([]byte(header)) + "." + b.EncodeToString([]byte(payload)) + "." + b.EncodeToString(signature)
}

func TestInputSHA256(t *testing.T) {
	want, err := InputSHA256([]byte(`{"a":1,"b":[true,null,"x"]}`))
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}$`, want)
	for _, same := range []string{
		`{"b":[true,null,"x"],"a":1}`,
		"{ \"a\" : 1 ,\n\t\"b\" : [ true , null , \"x\" ] }",
		`{"a":1.0,"b":[true,null,"\u0078"]}`,
		`{"a":1e0,"b":[true,null,"x"]}`,
	} {
		got, err := InputSHA256([]byte(same))
		require.NoError(t, err)
		assert.Equal(t, want, got, same)
	}
	for _, other := range []string{`{"a":2,"b":[true,null,"x"]}`, `{"a":1,"b":[null,true,"x"]}`, `{"a":"1","b":[true,null,"x"]}`} {
		got, err := InputSHA256([]byte(other))
		require.NoError(t, err)
		assert.NotEqual(t, want, got, other)
	}
	// RFC 8785 appendix B's vector: numbers in their ES6 form, keys sorted.
	canonical, err := InputSHA256([]byte(`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]}`))
	require.NoError(t, err)
	spelled, err := InputSHA256([]byte(`{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}`))
	require.NoError(t, err)
	assert.Equal(t, spelled, canonical)

	null, err := InputSHA256(nil)
	require.NoError(t, err)
	explicit, err := InputSHA256([]byte("null"))
	require.NoError(t, err)
	assert.Equal(t, explicit, null, "no input is JSON null")
	_, err = InputSHA256([]byte(`{"a":`))
	assert.Error(t, err)
	_, err = InputSHA256([]byte(`{"a":1,"a":2}`))
	assert.Error(t, err, "duplicate keys have no one meaning")
}

func TestClaimsJSON(t *testing.T) {
	c := claims(t)
	raw, err := json.Marshal(c)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	assert.Equal(t, map[string]any{"iss": "https://assent.example", "sub": "apr_1", "org": "org_1", "inputSha256": c.InputSHA256,
		"deciders": []any{"mem_1"}, "iat": float64(decidedAt.Unix()), "exp": float64(decidedAt.Add(time.Hour).Unix())}, m,
		"action and jti are left out when empty")

	c.Deciders, c.Action, c.ID = nil, "payments.refund", "jti_1"
	raw, err = json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"deciders":[]`, "a policy allow has no deciders, never null")
	assert.Contains(t, string(raw), `"action":"payments.refund"`)
	assert.Contains(t, string(raw), `"jti":"jti_1"`)
	var back Claims
	require.NoError(t, json.Unmarshal(raw, &back))
	c.Deciders = []string{}
	assert.Equal(t, c, back)
}

// TestVerify: a token verifies against the input it approved, however
// that input is spelled, and each way it can be wrong has its error.
func TestVerify(t *testing.T) {
	key, other := newKey(t), newKey(t)
	retired := newKey(t)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(retired, "dk_old"), publicJWK(key, "dk_1"),
		{Key: ecKey.Public(), KeyID: "ec_1", Algorithm: string(jose.ES256), Use: "sig"}}}
	verifier := func() *Verifier {
		return &Verifier{Keys: set, Issuer: "https://assent.example", Organization: "org_1", Now: func() time.Time { return decidedAt.Add(time.Minute) }}
	}
	sign := func(k ed25519.PrivateKey, kid string, edit func(*Claims)) string {
		c := claims(t)
		if edit != nil {
			edit(&c)
		}
		payload, err := json.Marshal(c)
		require.NoError(t, err)
		return signRaw(t, k, kid, payload)
	}
	good := sign(key, "dk_1", nil)
	parts := strings.Split(good, ".")
	signature, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	tampered := append([]byte{}, signature...)
	tampered[0] ^= 1
	otherPayload := strings.Split(sign(key, "dk_1", func(c *Claims) { c.Organization = "org_2" }), ".")[1]
	es256, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: ecKey, KeyID: "ec_1"}}, nil)
	require.NoError(t, err)
	payload, err := json.Marshal(claims(t))
	require.NoError(t, err)
	signedES256, err := es256.Sign(payload)
	require.NoError(t, err)
	es256Token, err := signedES256.CompactSerialize()
	require.NoError(t, err)

	cases := []struct {
		name   string
		token  string
		input  string
		edit   func(*Verifier)
		err    error
		reason string
	}{
		{name: "the approved input", token: good, input: input},
		{name: "keys reordered, spaced", token: good, input: "{\"lines\": [{\"qty\": 2, \"sku\": \"A-1\"}],\n \"currency\": \"EUR\", \"amount\": 80.0}"},
		{name: "signed by a retired key still listed", token: sign(retired, "dk_old", nil), input: input},
		{name: "within the leeway after exp", token: good, input: input, edit: func(v *Verifier) {
			v.Now = func() time.Time { return decidedAt.Add(time.Hour + 10*time.Second) }
		}},
		{name: "another input", token: good, input: `{"amount":100,"currency":"EUR","lines":[{"sku":"A-1","qty":2}]}`, err: ErrInput},
		{name: "a field more", token: good, input: `{"amount":80,"currency":"EUR","lines":[{"sku":"A-1","qty":2}],"note":""}`, err: ErrInput},
		{name: "input not JSON", token: good, input: `{"amount":`, err: ErrInput},
		{name: "no input", token: good, input: ``, err: ErrInput},
		{name: "another organisation", token: good, input: input, edit: func(v *Verifier) { v.Organization = "org_2" }, err: ErrOrganization},
		{name: "another organisation's token", token: sign(key, "dk_1", func(c *Claims) { c.Organization = "org_2" }), input: input, err: ErrOrganization},
		{name: "another issuer", token: sign(key, "dk_1", func(c *Claims) { c.Issuer = "https://evil.example" }), input: input, err: ErrIssuer},
		{name: "expired", token: good, input: input, edit: func(v *Verifier) {
			v.Now = func() time.Time { return decidedAt.Add(time.Hour + time.Minute) }
		}, err: ErrExpired},
		{name: "expired without leeway", token: good, input: input, edit: func(v *Verifier) {
			v.Now, v.Leeway = func() time.Time { return decidedAt.Add(time.Hour + time.Second) }, time.Nanosecond
		}, err: ErrExpired},
		{name: "issued in the future", token: good, input: input, edit: func(v *Verifier) {
			v.Now = func() time.Time { return decidedAt.Add(-time.Hour) }
		}, err: ErrNotYetValid},
		{name: "unknown kid", token: sign(other, "dk_2", nil), input: input, err: ErrUnknownKey},
		{name: "no kid", token: encode(`{"alg":"EdDSA"}`, string(payload), ed25519.Sign(key, []byte("x"))), input: input, err: ErrUnknownKey},
		{name: "kid of a key not Ed25519", token: encode(`{"alg":"EdDSA","kid":"ec_1"}`, string(payload), []byte("sig")), input: input, err: ErrUnknownKey},
		{name: "a listed kid, another key's signature", token: sign(other, "dk_1", nil), input: input, err: ErrSignature},
		{name: "tampered signature", token: parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(tampered), input: input, err: ErrSignature},
		{name: "tampered claims", token: parts[0] + "." + otherPayload + "." + parts[2], input: input, err: ErrSignature},
		{name: "alg ES256", token: es256Token, input: input, err: ErrAlgorithm},
		{name: "alg none", token: encode(`{"alg":"none","kid":"dk_1"}`, string(payload), nil), input: input, err: ErrAlgorithm},
		{name: "alg HS256", token: encode(`{"alg":"HS256","kid":"dk_1"}`, string(payload), []byte("mac")), input: input, err: ErrAlgorithm},
		{name: "not a JWS", token: "not.a-token", input: input, err: ErrMalformed},
		{name: "empty", token: "", input: input, err: ErrMalformed},
		{name: "claims missing", token: sign(key, "dk_1", func(c *Claims) { c.Subject, c.InputSHA256 = "", "" }), input: input, err: ErrMalformed},
		{name: "no expiry", token: sign(key, "dk_1", func(c *Claims) { c.Expiry = time.Unix(0, 0) }), input: input, err: ErrMalformed},
		{name: "a verifier without keys", token: good, input: input, edit: func(v *Verifier) { v.Keys = jose.JSONWebKeySet{} }, err: ErrVerifier},
		{name: "a verifier without issuer", token: good, input: input, edit: func(v *Verifier) { v.Issuer = "" }, err: ErrVerifier},
		{name: "a verifier without organisation", token: good, input: input, edit: func(v *Verifier) { v.Organization = "" }, err: ErrVerifier},
	}
	sentinels := []error{ErrMalformed, ErrAlgorithm, ErrUnknownKey, ErrSignature, ErrIssuer, ErrOrganization, ErrExpired, ErrNotYetValid, ErrInput, ErrVerifier}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := verifier()
			if tc.edit != nil {
				tc.edit(v)
			}
			// VerifyToken checks all but the input.
			claims, tokenErr := v.VerifyToken(tc.token)
			if tc.err == nil || tc.err == ErrInput {
				require.NoError(t, tokenErr)
				assert.Equal(t, "apr_1", claims.Subject)
			} else {
				assert.ErrorIs(t, tokenErr, tc.err)
			}
			got, err := v.Verify(tc.token, []byte(tc.input))
			if tc.err == nil {
				require.NoError(t, err)
				assert.Equal(t, "apr_1", got.Subject)
				return
			}
			assert.Nil(t, got)
			require.ErrorIs(t, err, tc.err)
			for _, s := range sentinels {
				if s != tc.err {
					assert.False(t, errors.Is(err, s), "%v is also %v", err, s)
				}
			}
		})
	}
}

// signRaw signs any payload as Sign would, for claims Sign refuses.
func signRaw(t *testing.T, key ed25519.PrivateKey, kid string, payload []byte) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	token, err := jws.CompactSerialize()
	require.NoError(t, err)
	return token
}

func TestSignRefuses(t *testing.T) {
	key := newKey(t)
	_, err := Sign(key, "", claims(t))
	assert.Error(t, err, "a token must name its key")
	_, err = Sign(ed25519.PrivateKey("short"), "dk_1", claims(t))
	assert.Error(t, err)
	for name, edit := range map[string]func(*Claims){
		"no issuer":       func(c *Claims) { c.Issuer = "" },
		"no subject":      func(c *Claims) { c.Subject = "" },
		"no organisation": func(c *Claims) { c.Organization = "" },
		"no input hash":   func(c *Claims) { c.InputSHA256 = "" },
		"not a hash":      func(c *Claims) { c.InputSHA256 = strings.ToUpper(c.InputSHA256) },
		"no decision":     func(c *Claims) { c.IssuedAt = time.Time{} },
		"no expiry":       func(c *Claims) { c.Expiry = time.Time{} },
		"expiry first":    func(c *Claims) { c.Expiry = c.IssuedAt },
	} {
		c := claims(t)
		edit(&c)
		_, err := Sign(key, "dk_1", c)
		assert.ErrorIs(t, err, ErrMalformed, name)
	}
}

func TestSignHeader(t *testing.T) {
	token, err := Sign(newKey(t), "dk_1", claims(t))
	require.NoError(t, err)
	header, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.Unmarshal(header, &h))
	assert.Equal(t, map[string]any{"alg": "EdDSA", "kid": "dk_1", "typ": "JWT"}, h)
}

func TestNewVerifier(t *testing.T) {
	key := newKey(t)
	// The instance's JWK set, with the members it adds beside the JWK's.
	jwks := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + base64.RawURLEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) +
		`","kid":"dk_1","use":"sig","alg":"EdDSA","createdAt":"2026-11-26T10:00:00Z","retiredAt":null}]}`
	v, err := NewVerifier([]byte(jwks), "https://assent.example", "org_1")
	require.NoError(t, err)
	v.Now = func() time.Time { return decidedAt }
	token, err := Sign(key, "dk_1", claims(t))
	require.NoError(t, err)
	_, err = v.Verify(token, []byte(input))
	assert.NoError(t, err)

	_, err = NewVerifier([]byte(`{"keys":`), "https://assent.example", "org_1")
	assert.Error(t, err)
}

func TestCheckMeaning(t *testing.T) {
	for _, ok := range []string{
		`{"amount":10,"currency":"EUR"}`, `null`, ``, `[1,2]`, `{"acct":9007199254740992}`, `{"acct":-9007199254740992}`,
		`{"acct":"9007199254740993"}`, `{"a":{"k":1},"b":{"K":2}}`, `{"ß":1,"ss":2}`, `{"ı":1,"i":2}`, `{"n":1.5e15,"m":0.1}`,
	} {
		assert.NoError(t, CheckMeaning([]byte(ok)), ok)
	}
	for in, path := range map[string]string{
		`{"amount":10,"currency":"EUR","Amount":900}`:   "Amount",
		`{"AMOUNT":1,"amount":2}`:                       "amount",
		`{"lines":[{"sku":"a"},{"sku":"b","SKU":"c"}]}`: "lines[1].SKU",
		`{"s":1,"ſ":2}`:                                 "ſ",
		"{\"k\":1,\"\u212a\":2}":                        "\u212a",
		`{"acct":9007199254740993}`:                     "acct",
		`{"acct":-9007199254740993}`:                    "acct",
		`{"acct":9007199254740992.5}`:                   "acct",
		`{"acct":9.007199254740993e15}`:                 "acct",
		`{"a":[1,1e16]}`:                                "a[1]",
		`{"a":1e400}`:                                   "a",
		`9007199254740994`:                              "",
	} {
		err := CheckMeaning([]byte(in))
		var ambiguous *AmbiguityError
		if assert.ErrorAs(t, err, &ambiguous, in) {
			assert.Equal(t, path, ambiguous.Path, in)
			assert.ErrorIs(t, err, ErrAmbiguous)
		}
	}
}

// CheckKeys holds a document kept as written (a dataset) to the key rule
// alone: its numbers are not bound by a hash.
func TestCheckKeys(t *testing.T) {
	assert.NoError(t, CheckKeys([]byte(`{"id":12345678901234567890}`)))
	var ambiguous *AmbiguityError
	require.ErrorAs(t, CheckKeys([]byte(`{"rows":[{"v":1,"V":2}]}`)), &ambiguous)
	assert.Equal(t, "rows[0].V", ambiguous.Path)
}

func TestVerifyRefusesAmbiguousInput(t *testing.T) {
	key := newKey(t)
	v := &Verifier{Keys: jose.JSONWebKeySet{Keys: []jose.JSONWebKey{publicJWK(key, "k1")}}, Issuer: "https://assent.example",
		Organization: "org_1", Now: func() time.Time { return decidedAt }}
	for _, in := range []string{`{"amount":10,"currency":"EUR","Amount":900}`, `{"acct":9007199254740993}`} {
		c := claims(t)
		sum, err := InputSHA256([]byte(in))
		require.NoError(t, err)
		c.InputSHA256 = sum
		token, err := Sign(key, "k1", c)
		require.NoError(t, err)
		_, err = v.Verify(token, []byte(in))
		assert.ErrorIs(t, err, ErrInput, in)
		assert.ErrorIs(t, err, ErrAmbiguous, in)
	}
}
