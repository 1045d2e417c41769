// Package decisiontoken signs and verifies Assent's decision tokens: the
// proof, carried by an approved approval (its read, its approval.approved
// event and callback) and by a gate answer of allowed, that this input was
// approved for this organisation. A tool about to run an action verifies
// the token against the input it is about to run, offline, and refuses to
// run anything else.
//
// A token is a compact JWS signed with Ed25519 (alg EdDSA) whose kid names
// one of the instance's decision keys, published as a JSON Web Key set at
// <base URL>/.well-known/jwks.json (retired keys stay listed until the
// tokens they signed have expired). Its claims:
//
//	iss          the instance's public base URL
//	sub          the approval id (or the gate check's id)
//	org          the organisation id
//	action       the registered action, when the gate asked
//	inputSha256  lowercase hex SHA-256 of the RFC 8785 (JCS) canonical
//	             JSON of the approved input
//	deciders     the member ids who approved; empty for a policy allow
//	iat, exp     when it was decided and until when the token holds
//	jti          the token's own id, unique: an execution receipt names
//	             the token by it (absent from tokens issued before
//	             receipts, which take none)
//
// Verify compares inputs by their canonical hash, so the order of keys and
// the whitespace of the input do not matter; any other value does. It
// refuses an input that may mean something else to an executor than to
// the hash (CheckMeaning): keys equal without regard to case in one
// object, numbers beyond ±2^53.
package decisiontoken

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// Algorithm is the one signature algorithm of decision tokens.
const Algorithm = jose.EdDSA

// DefaultLeeway is how far a verifier's clock may be off the instance's
// when it checks iat and exp, when Verifier.Leeway is zero.
const DefaultLeeway = 30 * time.Second

// Why Verify refused a token. Compare with errors.Is.
var (
	// ErrMalformed: not a compact JWS, or its claims are not a decision
	// token's (no subject, organisation, input hash or expiry).
	ErrMalformed = errors.New("decisiontoken: malformed token")
	// ErrAlgorithm: signed with an algorithm other than EdDSA.
	ErrAlgorithm = errors.New("decisiontoken: signature algorithm is not EdDSA")
	// ErrUnknownKey: no Ed25519 key of the key set has the token's kid.
	ErrUnknownKey = errors.New("decisiontoken: unknown signing key")
	// ErrSignature: the signature does not match the token.
	ErrSignature = errors.New("decisiontoken: invalid signature")
	// ErrIssuer: issued by another instance than the one expected.
	ErrIssuer = errors.New("decisiontoken: unexpected issuer")
	// ErrOrganization: decided in another organisation.
	ErrOrganization = errors.New("decisiontoken: decided in another organisation")
	// ErrExpired: the token's exp has passed.
	ErrExpired = errors.New("decisiontoken: token expired")
	// ErrNotYetValid: the token is issued in the future (a clock is off).
	ErrNotYetValid = errors.New("decisiontoken: token issued in the future")
	// ErrInput: the input is not the one approved (or not JSON at all, or
	// ambiguous: ErrAmbiguous).
	ErrInput = errors.New("decisiontoken: input is not the one approved")
	// ErrVerifier: the verifier names no key, issuer or organisation, and
	// would accept too much.
	ErrVerifier = errors.New("decisiontoken: verifier is not configured")
	// ErrAction: decided for another registered action (VerifyAction).
	ErrAction = errors.New("decisiontoken: decided for another action")
)

// Claims are what a decision token says.
type Claims struct {
	// Issuer is the instance's public base URL.
	Issuer string
	// Subject is the approval id, or the gate check's id.
	Subject string
	// Organization is the organisation id.
	Organization string
	// Action is the registered action, when the gate asked; else empty.
	Action string
	// InputSHA256 is InputSHA256 of the approved input.
	InputSHA256 string
	// Deciders are the member ids who approved; empty for a policy allow.
	Deciders []string
	// IssuedAt is when it was decided; Expiry until when the token holds.
	// Both are whole seconds on the wire.
	IssuedAt time.Time
	Expiry   time.Time
	// ID is the token's jti, unique to it; empty on tokens issued before
	// execution receipts.
	ID string
	// Mandate is the standing mandate that allowed a gate check (its
	// granter the one decider); empty otherwise.
	Mandate string
}

// jsonClaims are Claims as JSON.
type jsonClaims struct {
	Issuer       string   `json:"iss"`
	Subject      string   `json:"sub"`
	Organization string   `json:"org"`
	Action       string   `json:"action,omitempty"`
	InputSHA256  string   `json:"inputSha256"`
	Deciders     []string `json:"deciders"`
	IssuedAt     int64    `json:"iat"`
	Expiry       int64    `json:"exp"`
	ID           string   `json:"jti,omitempty"`
	Mandate      string   `json:"mandate,omitempty"`
}

// MarshalJSON writes the claims with their JWT names, times as seconds
// since the epoch and deciders as an array, never null.
func (c Claims) MarshalJSON() ([]byte, error) {
	deciders := c.Deciders
	if deciders == nil {
		deciders = []string{}
	}
	return json.Marshal(jsonClaims{Issuer: c.Issuer, Subject: c.Subject, Organization: c.Organization, Action: c.Action,
		InputSHA256: c.InputSHA256, Deciders: deciders, IssuedAt: c.IssuedAt.Unix(), Expiry: c.Expiry.Unix(), ID: c.ID,
		Mandate: c.Mandate})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Claims) UnmarshalJSON(data []byte) error {
	var j jsonClaims
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*c = Claims{Issuer: j.Issuer, Subject: j.Subject, Organization: j.Organization, Action: j.Action,
		InputSHA256: j.InputSHA256, Deciders: j.Deciders, IssuedAt: time.Unix(j.IssuedAt, 0).UTC(), Expiry: time.Unix(j.Expiry, 0).UTC(), ID: j.ID,
		Mandate: j.Mandate}
	if c.Deciders == nil {
		c.Deciders = []string{}
	}
	return nil
}

// InputSHA256 returns the lowercase hex SHA-256 of the RFC 8785 canonical
// form of the JSON input: the same for any order of keys, any whitespace
// and any spelling of the same numbers and strings. Empty input stands for
// JSON null (an approval without input). It fails when input is not JSON.
func InputSHA256(input []byte) (string, error) {
	if len(input) == 0 {
		input = []byte("null")
	}
	canonical, err := jcs.Transform(input)
	if err != nil {
		return "", fmt.Errorf("decisiontoken: the input is not JSON: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}

// Sign returns the compact JWS of c signed with key, its header naming
// kid, the id under which the key's public half is published. It refuses
// claims Verify would refuse as malformed, and an expiry not after the
// decision.
func Sign(key ed25519.PrivateKey, kid string, c Claims) (string, error) {
	if len(key) != ed25519.PrivateKeySize {
		return "", errors.New("decisiontoken: the signing key is not an Ed25519 private key")
	}
	if kid == "" {
		return "", errors.New("decisiontoken: the signing key has no id")
	}
	if c.Issuer == "" || c.Subject == "" || c.Organization == "" || !hexSHA256.MatchString(c.InputSHA256) {
		return "", fmt.Errorf("%w: iss, sub, org and inputSha256 are required", ErrMalformed)
	}
	if c.IssuedAt.Unix() <= 0 || !c.Expiry.After(c.IssuedAt) {
		return "", fmt.Errorf("%w: exp must come after iat", ErrMalformed)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: Algorithm, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// ParseKeySet reads a JSON Web Key set, such as the body of
// /.well-known/jwks.json.
func ParseKeySet(jwks []byte) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		return set, fmt.Errorf("decisiontoken: not a JSON Web Key set: %w", err)
	}
	return set, nil
}

// Verifier checks tokens of one instance and one organisation.
type Verifier struct {
	// Keys are the instance's decision keys (ParseKeySet of its
	// /.well-known/jwks.json).
	Keys jose.JSONWebKeySet
	// Issuer is the instance's public base URL, as its tokens name it.
	Issuer string
	// Organization is the organisation whose decisions are accepted.
	Organization string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Leeway is how far the clocks may differ; zero is DefaultLeeway.
	Leeway time.Duration
}

// NewVerifier returns a verifier of the key set jwks (the JSON of the
// instance's /.well-known/jwks.json) for tokens issued by issuer in
// organization.
func NewVerifier(jwks []byte, issuer, organization string) (*Verifier, error) {
	keys, err := ParseKeySet(jwks)
	if err != nil {
		return nil, err
	}
	return &Verifier{Keys: keys, Issuer: issuer, Organization: organization}, nil
}

// hexSHA256 is what inputSha256 must look like.
var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Verify checks token and that input (JSON) is the input it approved,
// and returns its claims. It fails, with an error errors.Is can name, for
// a token not signed by one of the keys with EdDSA, of another issuer or
// organisation, expired or issued in the future, and for any other input.
func (v *Verifier) Verify(token string, input []byte) (*Claims, error) {
	c, err := v.VerifyToken(token)
	if err != nil {
		return nil, err
	}
	if err := c.Approves(input); err != nil {
		return nil, err
	}
	return c, nil
}

// VerifyToken is Verify without the input: the token's signature, issuer,
// organisation and times. An execution receipt checks the input apart, to
// record what ran when it is not what was approved.
func (v *Verifier) VerifyToken(token string) (*Claims, error) {
	if len(v.Keys.Keys) == 0 || v.Issuer == "" || v.Organization == "" {
		return nil, ErrVerifier
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{Algorithm})
	if err != nil {
		var alg *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &alg) {
			return nil, fmt.Errorf("%w: %s", ErrAlgorithm, alg.Got)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if len(jws.Signatures) != 1 {
		return nil, ErrMalformed
	}
	kid := jws.Signatures[0].Header.KeyID
	key := v.key(kid)
	if key == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, ErrSignature
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if c.Subject == "" || c.Organization == "" || !hexSHA256.MatchString(c.InputSHA256) || c.Expiry.Unix() == 0 || c.IssuedAt.Unix() == 0 {
		return nil, fmt.Errorf("%w: missing claims", ErrMalformed)
	}
	if c.Issuer != v.Issuer {
		return nil, fmt.Errorf("%w: %q", ErrIssuer, c.Issuer)
	}
	if c.Organization != v.Organization {
		return nil, fmt.Errorf("%w: %q", ErrOrganization, c.Organization)
	}
	now, leeway := time.Now(), v.Leeway
	if v.Now != nil {
		now = v.Now()
	}
	if leeway == 0 {
		leeway = DefaultLeeway
	}
	if now.After(c.Expiry.Add(leeway)) {
		return nil, fmt.Errorf("%w at %s", ErrExpired, c.Expiry.Format(time.RFC3339))
	}
	if c.IssuedAt.After(now.Add(leeway)) {
		return nil, fmt.Errorf("%w: %s", ErrNotYetValid, c.IssuedAt.Format(time.RFC3339))
	}
	return &c, nil
}

// Approves reports, as ErrInput, when input (JSON) is not the input the
// claims approved, or may mean something else to an executor than to its
// hash (CheckMeaning; errors.Is names ErrAmbiguous too): an older server
// may have approved such an input.
func (c *Claims) Approves(input []byte) error {
	if err := CheckMeaning(input); err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	sum, err := InputSHA256(input)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	if sum != c.InputSHA256 {
		return ErrInput
	}
	return nil
}

// VerifyAction is Verify for a tool that runs one registered action: the
// token must also have been decided for action, so an approval of one
// action never runs another with the same input.
func (v *Verifier) VerifyAction(token, action string, input []byte) (*Claims, error) {
	c, err := v.Verify(token, input)
	if err != nil {
		return nil, err
	}
	if c.Action != action {
		return nil, fmt.Errorf("%w: %q", ErrAction, c.Action)
	}
	return c, nil
}

// key returns the public key the set publishes under kid for EdDSA
// signatures, or nil.
func (v *Verifier) key(kid string) ed25519.PublicKey {
	if kid == "" {
		return nil
	}
	for _, k := range v.Keys.Key(kid) {
		public, ok := k.Key.(ed25519.PublicKey)
		if ok && (k.Algorithm == "" || k.Algorithm == string(Algorithm)) && (k.Use == "" || k.Use == "sig") {
			return public
		}
	}
	return nil
}
