package decisiontoken_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// A tool about to run an approved action verifies the approval's
// decisionToken against the input it is about to run, and runs nothing
// else. Here the instance's signing is played by Sign with a key whose
// public half is in the JWK set a tool would fetch from
// https://assent.example/.well-known/jwks.json (and cache).
func Example() {
	seed := make([]byte, ed25519.SeedSize) // the instance's decision key
	key := ed25519.NewKeyFromSeed(seed)
	jwks := fmt.Sprintf(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"dk_1","use":"sig","alg":"EdDSA","x":%q}]}`,
		base64.RawURLEncoding.EncodeToString(key.Public().(ed25519.PublicKey)))

	approved := []byte(`{"amount":80,"currency":"EUR"}`) // the approval's approvedInput
	sum, _ := decisiontoken.InputSHA256(approved)
	decided := time.Now()
	token, _ := decisiontoken.Sign(key, "dk_1", decisiontoken.Claims{Issuer: "https://assent.example", Subject: "apr_1",
		Organization: "org_1", InputSHA256: sum, Deciders: []string{"mem_1"}, IssuedAt: decided, Expiry: decided.Add(time.Hour)})

	verifier, err := decisiontoken.NewVerifier([]byte(jwks), "https://assent.example", "org_1")
	if err != nil {
		panic(err)
	}
	claims, err := verifier.Verify(token, []byte(`{ "currency": "EUR", "amount": 80 }`))
	fmt.Println(claims.Subject, claims.Deciders, err)
	_, err = verifier.Verify(token, []byte(`{"amount":100,"currency":"EUR"}`))
	fmt.Println(errors.Is(err, decisiontoken.ErrInput))
	// Output:
	// apr_1 [mem_1] <nil>
	// true
}
