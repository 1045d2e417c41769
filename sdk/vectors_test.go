package sdk_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
	"github.com/assent-hq/assent/sdk/go/webhook"
)

// The vectors every SDK's suite reads (sdk/testdata/vectors.json): signed
// deliveries, decision tokens and RFC 8785 canonical forms, each made by
// the server's own packages with fixed keys and times (HMAC-SHA256 and
// Ed25519 are deterministic) and checked against them here, so the file
// states what the server does.

type vectorFile struct {
	Comment        string          `json:"comment"`
	Webhooks       []webhookCase   `json:"webhooks"`
	DecisionTokens tokenVectors    `json:"decisionTokens"`
	Canonical      []canonicalCase `json:"canonicalJson"`
}

type webhookCase struct {
	Name string `json:"name"`
	// Headers as received (any case); Body the raw body, exactly.
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Secret  string            `json:"secret"`
	// Now is the receiver's clock, unix seconds; Tolerance in seconds.
	Now       int64 `json:"now"`
	Tolerance int64 `json:"tolerance"`
	Valid     bool  `json:"valid"`
	// Error: missing_header, malformed_header, timestamp_out_of_tolerance
	// or no_matching_signature.
	Error string `json:"error,omitempty"`
	// Event is the kind of the parsed event of a valid delivery.
	Event string `json:"event,omitempty"`
}

type tokenVectors struct {
	// JWKS is the instance's /.well-known/jwks.json; Issuer and
	// Organization what a verifier expects unless a case says otherwise.
	JWKS         json.RawMessage `json:"jwks"`
	Issuer       string          `json:"issuer"`
	Organization string          `json:"organization"`
	Leeway       int64           `json:"leeway"`
	Cases        []tokenCase     `json:"cases"`
}

type tokenCase struct {
	Name  string `json:"name"`
	Token string `json:"token"`
	// Input is the JSON text of the input about to run.
	Input        string `json:"input"`
	Now          int64  `json:"now"`
	Issuer       string `json:"issuer,omitempty"`
	Organization string `json:"organization,omitempty"`
	// Action, when set, is the registered action the verifier runs.
	Action string `json:"action,omitempty"`
	Valid  bool   `json:"valid"`
	// Error: malformed, algorithm, unknown_key, signature, issuer,
	// organization, expired, not_yet_valid, input or action.
	Error string `json:"error,omitempty"`
	// Subject of a valid token.
	Subject string `json:"subject,omitempty"`
}

type canonicalCase struct {
	Name      string `json:"name"`
	Input     string `json:"input"`
	Canonical string `json:"canonical"`
	SHA256    string `json:"sha256"`
}

const (
	issuer = "https://assent.example.com"
	org    = "org_01jgx5z7m3q8r2t4v6w8y0a2c4"
	iat    = int64(1767225600) // 2026-01-01T00:00:00Z
	ttl    = int64(3600)
)

func seedKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestVectors(t *testing.T) {
	f := vectorFile{Comment: "Made by TestVectors in sdk/vectors_test.go with the server's webhook and decisiontoken packages; " +
		"ASSENT_UPDATE_SDK=1 go test ./sdk/ rewrites it. Times are unix seconds."}
	f.Webhooks = webhookVectors(t)
	f.DecisionTokens = decisionTokenVectors(t)
	f.Canonical = canonicalVectors(t)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(f))
	checkGenerated(t, "testdata/vectors.json", out.Bytes())
}

func webhookVectors(t *testing.T) []webhookCase {
	const secret = "whsec_sdk_vectors_secret"
	const other = "whsec_another_secret"
	t0 := time.Unix(iat, 0)
	body := `{"event":"approval.approved","sentAt":"2026-01-01T00:00:00.000000Z","data":{"id":"apr_01jgx5z7m3q8r2t4v6w8y0a2c4","status":"approved","approvedInput":{"amount":100,"currency":"EUR"}}}`
	callback := `{"event":"collection.completed","sentAt":"2026-01-01T00:00:00.000000Z","requestType":"collection","requestId":"col_01jgx5z7m3q8r2t4v6w8y0a2c4","data":{"id":"col_01jgx5z7m3q8r2t4v6w8y0a2c4","title":"Caf\u00e9 \ud83d\ude00 budget","status":"complete"}}` + "\n"
	headers := func(event, sig string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "Assent-Event": event, "Assent-Delivery": "dlv_01jgx5z7m3q8r2t4v6w8y0a2c4",
			"Assent-Attempt": "1", "Assent-Signature": sig}
	}
	good := webhook.SignatureHeader(t0, []byte(body), secret)
	goodSig := strings.TrimPrefix(good, "t="+"1767225600,v1=")
	otherSig := webhook.Sign(other, t0, []byte(body))
	cases := []webhookCase{
		{Name: "valid", Headers: headers("approval.approved", good), Body: body, Now: iat + 5},
		{Name: "valid_lowercase_header_names", Headers: map[string]string{"assent-signature": good, "assent-event": "approval.approved"}, Body: body, Now: iat},
		{Name: "valid_callback_unicode_trailing_newline", Headers: headers("collection.completed", webhook.SignatureHeader(t0, []byte(callback), secret)), Body: callback, Now: iat},
		{Name: "valid_rotation_second_v1_matches", Headers: headers("approval.approved", webhook.SignatureHeader(t0, []byte(body), other, secret)), Body: body, Now: iat},
		{Name: "valid_rotation_first_v1_matches", Headers: headers("approval.approved", webhook.SignatureHeader(t0, []byte(body), secret, other)), Body: body, Now: iat},
		{Name: "valid_unknown_scheme_ignored", Headers: headers("approval.approved", good+",v2=abc"), Body: body, Now: iat},
		{Name: "valid_exactly_at_tolerance_past", Headers: headers("approval.approved", good), Body: body, Now: iat + 300},
		{Name: "valid_exactly_at_tolerance_future", Headers: headers("approval.approved", good), Body: body, Now: iat - 300},
		{Name: "valid_custom_tolerance", Headers: headers("approval.approved", good), Body: body, Now: iat + 3000, Tolerance: 3600},
		{Name: "wrong_secret", Headers: headers("approval.approved", "t=1767225600,v1="+otherSig), Body: body, Now: iat, Error: "no_matching_signature"},
		{Name: "tampered_body", Headers: headers("approval.approved", good), Body: strings.Replace(body, `"amount":100`, `"amount":900`, 1), Now: iat, Error: "no_matching_signature"},
		{Name: "reserialized_body", Headers: headers("approval.approved", good), Body: strings.ReplaceAll(body, `":`, `": `), Now: iat, Error: "no_matching_signature"},
		{Name: "several_v1_none_matches", Headers: headers("approval.approved", "t=1767225600,v1="+otherSig+",v1="+strings.Repeat("0", 64)), Body: body, Now: iat, Error: "no_matching_signature"},
		{Name: "signature_for_another_timestamp", Headers: headers("approval.approved", "t=1767225601,v1="+goodSig), Body: body, Now: iat, Error: "no_matching_signature"},
		{Name: "too_old", Headers: headers("approval.approved", good), Body: body, Now: iat + 301, Error: "timestamp_out_of_tolerance"},
		{Name: "too_far_in_future", Headers: headers("approval.approved", good), Body: body, Now: iat - 301, Error: "timestamp_out_of_tolerance"},
		{Name: "missing_header", Headers: map[string]string{"Content-Type": "application/json"}, Body: body, Now: iat, Error: "missing_header"},
		{Name: "no_timestamp", Headers: headers("approval.approved", "v1="+goodSig), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "no_v1", Headers: headers("approval.approved", "t=1767225600"), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "two_timestamps", Headers: headers("approval.approved", "t=1767225600,t=1767225600,v1="+goodSig), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "signed_timestamp", Headers: headers("approval.approved", "t=+1767225600,v1="+goodSig), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "space_after_comma", Headers: headers("approval.approved", "t=1767225600, v1="+goodSig), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "short_v1", Headers: headers("approval.approved", "t=1767225600,v1="+goodSig[:62]), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "non_hex_v1", Headers: headers("approval.approved", "t=1767225600,v1="+strings.Repeat("g", 64)), Body: body, Now: iat, Error: "malformed_header"},
		{Name: "item_without_equals", Headers: headers("approval.approved", good+",v1"), Body: body, Now: iat, Error: "malformed_header"},
		// t is read as a number: leading zeros sign the same t; beyond an
		// int64 it is malformed, within one merely far off.
		{Name: "valid_timestamp_leading_zeros", Headers: headers("approval.approved", "t=001767225600,v1="+goodSig), Body: body, Now: iat},
		{Name: "timestamp_largest_int64", Headers: headers("approval.approved", "t=9223372036854775807,v1="+goodSig), Body: body, Now: iat, Error: "timestamp_out_of_tolerance"},
		{Name: "timestamp_beyond_int64", Headers: headers("approval.approved", "t=9223372036854775808,v1="+goodSig), Body: body, Now: iat, Error: "malformed_header"},
	}
	for i := range cases {
		c := &cases[i]
		c.Secret = secret
		if c.Tolerance == 0 {
			c.Tolerance = 300
		}
		c.Valid = c.Error == ""
		if c.Valid {
			var env struct{ Event string }
			require.NoError(t, json.Unmarshal([]byte(c.Body), &env))
			c.Event = env.Event
		}
		// The server's own check agrees with what the case says.
		header := ""
		for k, v := range c.Headers {
			if strings.EqualFold(k, webhook.HeaderSignature) {
				header = v
			}
		}
		if header == "" {
			require.Equal(t, "missing_header", c.Error, c.Name)
			continue
		}
		err := webhook.Verify(header, []byte(c.Body), c.Secret, time.Unix(c.Now, 0), time.Duration(c.Tolerance)*time.Second)
		want := map[string]error{"": nil, "malformed_header": webhook.ErrMalformedHeader,
			"timestamp_out_of_tolerance": webhook.ErrTimestampOutOfTolerance, "no_matching_signature": webhook.ErrNoMatchingSignature}[c.Error]
		if want == nil {
			require.NoError(t, err, c.Name)
		} else {
			require.ErrorIs(t, err, want, c.Name)
		}
	}
	return cases
}

var tokenErrors = map[string]error{
	"malformed": decisiontoken.ErrMalformed, "algorithm": decisiontoken.ErrAlgorithm, "unknown_key": decisiontoken.ErrUnknownKey,
	"signature": decisiontoken.ErrSignature, "issuer": decisiontoken.ErrIssuer, "organization": decisiontoken.ErrOrganization,
	"expired": decisiontoken.ErrExpired, "not_yet_valid": decisiontoken.ErrNotYetValid, "input": decisiontoken.ErrInput,
	"action": decisiontoken.ErrAction,
}

func decisionTokenVectors(t *testing.T) tokenVectors {
	active, retired, unlisted := seedKey(1), seedKey(2), seedKey(3)
	jwk := func(kid string, key ed25519.PrivateKey, created string, retiredAt any) map[string]any {
		return map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64(key.Public().(ed25519.PublicKey)), "kid": kid,
			"use": "sig", "alg": "EdDSA", "createdAt": created, "retiredAt": retiredAt}
	}
	jwks, err := json.Marshal(map[string]any{"keys": []any{
		jwk("dtk_01jgx5z7m3q8r2t4v6w8y0a2c5", active, "2025-12-01T00:00:00.000000Z", nil),
		jwk("dtk_01jgx5z7m3q8r2t4v6w8y0a2c6", retired, "2025-06-01T00:00:00.000000Z", "2025-12-01T00:00:00.000000Z"),
	}})
	require.NoError(t, err)
	const activeKid, retiredKid, unlistedKid = "dtk_01jgx5z7m3q8r2t4v6w8y0a2c5", "dtk_01jgx5z7m3q8r2t4v6w8y0a2c6", "dtk_01jgx5z7m3q8r2t4v6w8y0a2c7"

	const input = `{"amount":100,"currency":"EUR"}`
	hash := func(in string) string {
		sum, err := decisiontoken.InputSHA256([]byte(in))
		require.NoError(t, err)
		return sum
	}
	claims := func(sub, in string) decisiontoken.Claims {
		return decisiontoken.Claims{Issuer: issuer, Subject: sub, Organization: org, InputSHA256: hash(in),
			Deciders: []string{"mem_01jgx5z7m3q8r2t4v6w8y0a2c8"}, IssuedAt: time.Unix(iat, 0), Expiry: time.Unix(iat+ttl, 0)}
	}
	sign := func(key ed25519.PrivateKey, kid string, c decisiontoken.Claims) string {
		token, err := decisiontoken.Sign(key, kid, c)
		require.NoError(t, err)
		return token
	}
	// raw signs any header and payload with key, for tokens Sign refuses
	// to make.
	raw := func(key ed25519.PrivateKey, header, payload string) string {
		in := b64([]byte(header)) + "." + b64([]byte(payload))
		return in + "." + b64(ed25519.Sign(key, []byte(in)))
	}
	const sub = "apr_01jgx5z7m3q8r2t4v6w8y0a2c4"
	valid := sign(active, activeKid, claims(sub, input))
	parts := strings.Split(valid, ".")
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	sig[10] ^= 0x01
	badSig := parts[0] + "." + parts[1] + "." + b64(sig)
	otherOrg := claims(sub, input)
	otherOrg.Organization = "org_01jgx5z7m3q8r2t4v6w8y0a2c9"
	otherOrgPayload, err := json.Marshal(otherOrg)
	require.NoError(t, err)
	tampered := parts[0] + "." + b64(otherOrgPayload) + "." + parts[2]
	header := func(alg, kid string) string {
		if kid == "" {
			return `{"alg":"` + alg + `","typ":"JWT"}`
		}
		return `{"alg":"` + alg + `","kid":"` + kid + `","typ":"JWT"}`
	}
	payload, err := json.Marshal(claims(sub, input))
	require.NoError(t, err)
	hs := b64([]byte(header("HS256", activeKid))) + "." + b64(payload)
	mac := hmac.New(sha256.New, active.Public().(ed25519.PublicKey))
	mac.Write([]byte(hs))
	hs256 := hs + "." + b64(mac.Sum(nil))
	none := b64([]byte(header("none", activeKid))) + "." + b64(payload) + "."

	gate := claims("chk_01jgx5z7m3q8r2t4v6w8y0a2c4", input)
	gate.Action, gate.Deciders = "refund.create", nil
	gateToken := sign(active, activeKid, gate)
	// Numbers within ±2^53: a token binds no other (see input_*_beyond_2_53).
	tricky := `{"z":1e15,"a":[0.1,-0,1.5e-7,80.0,8e1,1E+2,-1.25e-10,1234567890123456.8e-1],"\u00e9":"caf\u00e9 \ud83d\ude00","\u20ac":"\u001f\"\\/","b":{"y":null,"x":true,"10":false,"1":[]},"big":9007199254740992,"\ud83d\ude00":"\u2028"}`
	otherIssuer := claims(sub, input)
	otherIssuer.Issuer = "https://other.example.com"

	now := iat + 60
	cases := []tokenCase{
		{Name: "valid", Token: valid, Input: input, Now: now, Subject: sub},
		{Name: "valid_reordered_respaced_input", Token: valid, Input: "{ \"currency\" : \"EUR\",\n  \"amount\": 100.0 }", Now: now, Subject: sub},
		{Name: "valid_number_spelling", Token: valid, Input: `{"amount":1e2,"currency":"EUR"}`, Now: now, Subject: sub},
		{Name: "valid_retired_key", Token: sign(retired, retiredKid, claims(sub, input)), Input: input, Now: now, Subject: sub},
		{Name: "valid_canonical_numbers_and_unicode", Token: sign(active, activeKid, claims(sub, tricky)), Input: tricky, Now: now, Subject: sub},
		{Name: "valid_null_input", Token: sign(active, activeKid, claims(sub, "null")), Input: "null", Now: now, Subject: sub},
		{Name: "valid_gate_action", Token: gateToken, Input: input, Now: now, Action: "refund.create", Subject: "chk_01jgx5z7m3q8r2t4v6w8y0a2c4"},
		{Name: "valid_within_leeway_after_expiry", Token: valid, Input: input, Now: iat + ttl + 30, Subject: sub},
		{Name: "valid_within_leeway_before_issue", Token: valid, Input: input, Now: iat - 30, Subject: sub},
		{Name: "other_action", Token: gateToken, Input: input, Now: now, Action: "refund.delete", Error: "action"},
		{Name: "approval_used_for_action", Token: valid, Input: input, Now: now, Action: "refund.create", Error: "action"},
		{Name: "input_changed", Token: valid, Input: `{"amount":120,"currency":"EUR"}`, Now: now, Error: "input"},
		{Name: "input_field_added", Token: valid, Input: `{"amount":100,"currency":"EUR","note":""}`, Now: now, Error: "input"},
		{Name: "input_number_as_string", Token: valid, Input: `{"amount":"100","currency":"EUR"}`, Now: now, Error: "input"},
		{Name: "input_not_json", Token: valid, Input: `{"amount":`, Now: now, Error: "input"},
		{Name: "wrong_organization", Token: valid, Input: input, Now: now, Organization: "org_01jgx5z7m3q8r2t4v6w8y0a2c9", Error: "organization"},
		{Name: "wrong_issuer", Token: sign(active, activeKid, otherIssuer), Input: input, Now: now, Error: "issuer"},
		{Name: "expired", Token: valid, Input: input, Now: iat + ttl + 31, Error: "expired"},
		{Name: "issued_in_the_future", Token: valid, Input: input, Now: iat - 31, Error: "not_yet_valid"},
		{Name: "bad_signature", Token: badSig, Input: input, Now: now, Error: "signature"},
		{Name: "tampered_claims", Token: tampered, Input: input, Now: now, Error: "signature"},
		{Name: "unknown_kid", Token: sign(unlisted, unlistedKid, claims(sub, input)), Input: input, Now: now, Error: "unknown_key"},
		{Name: "no_kid", Token: raw(active, header("EdDSA", ""), string(payload)), Input: input, Now: now, Error: "unknown_key"},
		{Name: "listed_kid_other_key", Token: sign(unlisted, activeKid, claims(sub, input)), Input: input, Now: now, Error: "signature"},
		{Name: "alg_hs256", Token: hs256, Input: input, Now: now, Error: "algorithm"},
		{Name: "alg_none", Token: none, Input: input, Now: now, Error: "algorithm"},
		{Name: "not_a_jws", Token: "not-a-token", Input: input, Now: now, Error: "malformed"},
		{Name: "two_segments", Token: parts[0] + "." + parts[1], Input: input, Now: now, Error: "malformed"},
		{Name: "missing_input_hash", Token: raw(active, header("EdDSA", activeKid),
			`{"iss":"`+issuer+`","sub":"`+sub+`","org":"`+org+`","deciders":[],"iat":1767225600,"exp":1767229200}`), Input: input, Now: now, Error: "malformed"},
		{Name: "payload_not_json", Token: raw(active, header("EdDSA", activeKid), `not json`), Input: input, Now: now, Error: "malformed"},
	}
	// Inputs an executor may read otherwise than their hash, each signed
	// as it is, so that only the ambiguity refuses it (an older server may
	// have approved one): keys equal under Unicode simple case folding in
	// one object, numbers beyond ±2^53.
	for _, c := range []struct{ name, in string }{
		{"input_keys_differing_by_case", `{"amount":10,"currency":"EUR","Amount":900}`},
		{"input_keys_differing_by_case_nested", `{"lines":[{"sku":"a"},{"SKU":"b","sku":"c"}]}`},
		{"input_keys_long_s", `{"s":1,"ſ":2}`},
		{"input_keys_kelvin_sign", "{\"k\":1,\"\u212a\":2}"},
		{"input_integer_beyond_2_53", `{"acct":9007199254740993}`},
		{"input_negative_integer_beyond_2_53", `{"acct":[-9007199254740993]}`},
		{"input_exponent_beyond_2_53", `{"acct":1e16}`},
		{"input_fraction_beyond_2_53", `{"acct":9007199254740992.5}`},
		{"valid_2_53_and_big_id_as_string", `{"acct":9007199254740992,"neg":-9007199254740992,"ref":"9007199254740993","n":1.5}`},
		{"valid_keys_equal_only_under_full_folding", `{"ß":1,"ss":2,"ı":3,"i":4}`},
		{"valid_case_variants_in_different_objects", `{"a":{"k":1},"b":{"K":2}}`},
	} {
		tc := tokenCase{Name: c.name, Token: sign(active, activeKid, claims(sub, c.in)), Input: c.in, Now: now, Error: "input"}
		if strings.HasPrefix(c.name, "valid_") {
			tc.Error, tc.Subject = "", sub
		}
		cases = append(cases, tc)
	}
	v := tokenVectors{JWKS: jwks, Issuer: issuer, Organization: org, Leeway: 30, Cases: cases}
	for i := range v.Cases {
		c := &v.Cases[i]
		c.Valid = c.Error == ""
		verifier, err := decisiontoken.NewVerifier(jwks, issuer, org)
		require.NoError(t, err)
		if c.Organization != "" {
			verifier.Organization = c.Organization
		}
		if c.Issuer != "" {
			verifier.Issuer = c.Issuer
		}
		at := time.Unix(c.Now, 0)
		verifier.Now = func() time.Time { return at }
		var got *decisiontoken.Claims
		if c.Action != "" {
			got, err = verifier.VerifyAction(c.Token, c.Action, []byte(c.Input))
		} else {
			got, err = verifier.Verify(c.Token, []byte(c.Input))
		}
		if c.Valid {
			require.NoError(t, err, c.Name)
			require.Equal(t, c.Subject, got.Subject, c.Name)
			continue
		}
		want := tokenErrors[c.Error]
		require.NotNil(t, want, c.Name)
		require.True(t, errors.Is(err, want), "%s: got %v, want %v", c.Name, err, want)
	}
	return v
}

func canonicalVectors(t *testing.T) []canonicalCase {
	inputs := []struct{ name, in string }{
		{"key_order", `{"b":2,"a":1,"c":{"z":0,"y":[3,2,1]}}`},
		{"whitespace", " {\n\t\"a\" :\t[ 1 , 2 ] } "},
		{"integers_as_doubles", `[0,-0,1,-1,9007199254740991,9007199254740992,9007199254740993,-9007199254740993,18446744073709551616]`},
		{"number_spellings", `[1.0,1e0,10E-1,100,1e2,0.000001,1e-7,123456789012345678901,1e21,1e20,1.5e300,-2.5e-300]`},
		{"fractions", `[0.1,0.2,0.30000000000000004,3.141592653589793,2.718281828459045,1.7976931348623157e308,5e-324,4.35,0.5]`},
		{"es6_edge_numbers", `[333333333.33333329,1E30,4.50,2e-3,0.000001,1e-6,1e-7,12345678901234567890,295147905179352830000]`},
		{"strings_escaped", `["\u0000\u0001\u001f","\"\\","\/","\b\f\n\r\t","\u007f\u0080","\u2028\u2029","\ud83d\ude00","caf\u00e9"]`},
		{"key_sort_utf16", `{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7,"a":8,"A":9}`},
		{"literals", `[true,false,null,{},[]]`},
		{"scalar", `"x"`},
	}
	var out []canonicalCase
	for _, c := range inputs {
		canonical, err := jcs.Transform([]byte(c.in))
		require.NoError(t, err, c.name)
		sum := sha256.Sum256(canonical)
		h, err := decisiontoken.InputSHA256([]byte(c.in))
		require.NoError(t, err)
		require.Equal(t, b64hex(sum[:]), h)
		out = append(out, canonicalCase{Name: c.name, Input: c.in, Canonical: string(canonical), SHA256: h})
	}
	return out
}

func b64hex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, len(b)*2)
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
