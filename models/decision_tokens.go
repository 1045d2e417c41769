package models

import (
	"context"
	"crypto/ed25519"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// DecisionSigner signs decision tokens with one decision key. Take one
// before a transaction that signs: the key is read (and the instance's
// first made) outside it.
type DecisionSigner struct {
	// KeyID names the key in the tokens' kid and in /.well-known/jwks.json.
	KeyID string
	key   ed25519.PrivateKey
}

// Sign returns c signed as a decision token.
func (d *DecisionSigner) Sign(c decisiontoken.Claims) (string, error) {
	return decisiontoken.Sign(d.key, d.KeyID, c)
}

// DecisionSigner returns a signer with the active decision key, making the
// instance's first on first use.
func (s *SigningKeyStore) DecisionSigner(ctx context.Context) (*DecisionSigner, error) {
	k, private, err := s.ActiveSigningKey(ctx, DecisionFamily)
	if err != nil {
		return nil, err
	}
	return &DecisionSigner{KeyID: k.ID, key: private}, nil
}

// SignDecision signs c with the active decision key, its kid filled in:
// the one way anything (an approval's persist, the gate's allow) issues a
// decision token.
func (s *SigningKeyStore) SignDecision(ctx context.Context, c decisiontoken.Claims) (string, error) {
	d, err := s.DecisionSigner(ctx)
	if err != nil {
		return "", err
	}
	return d.Sign(c)
}
