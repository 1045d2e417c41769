package models

import (
	"context"
	"crypto/ed25519"
	"slices"
	"time"

	"github.com/assent-hq/assent/sdk/go/decisiontoken"
)

// DefaultDecisionTokenTTL is how long a decision token holds after the
// decision when neither the approval nor its organisation says otherwise.
const DefaultDecisionTokenTTL = time.Hour

// DecisionTokenTTL is how long the organisation's decision tokens hold.
func (o *Organization) DecisionTokenTTL() time.Duration {
	if o.DecisionTokenTTLSeconds <= 0 {
		return DefaultDecisionTokenTTL
	}
	return time.Duration(o.DecisionTokenTTLSeconds) * time.Second
}

// DecisionTokenTTL is how long a's decision token holds: its own setting,
// else its organisation's.
func (a *Approval) DecisionTokenTTL(org *Organization) time.Duration {
	return tokenTTL(a.DecisionTokenTTLSeconds, org)
}

// tokenTTL is seconds when set, else org's lifetime.
func tokenTTL(seconds *int, org *Organization) time.Duration {
	if seconds != nil && *seconds > 0 {
		return time.Duration(*seconds) * time.Second
	}
	return org.DecisionTokenTTL()
}

// ApprovalDecisionClaims are the claims of approved approval a's decision
// token, issued by the instance at issuer (its public base URL): its
// approved input's hash, who approved it, and its decision time, the
// token holding for a.DecisionTokenTTL(org) after it.
func ApprovalDecisionClaims(a *Approval, org *Organization, issuer string) (decisiontoken.Claims, error) {
	sum, err := decisiontoken.InputSHA256(a.ApprovedInput)
	if err != nil {
		return decisiontoken.Claims{}, err
	}
	decided := a.UpdatedAt
	if a.DecidedAt != nil {
		decided = *a.DecidedAt
	}
	deciders := slices.Clone([]string(a.ApprovedBy))
	if deciders == nil {
		deciders = []string{}
	}
	c := decisiontoken.Claims{Issuer: issuer, Subject: a.ID, Organization: a.OrganizationID, InputSHA256: sum,
		Deciders: deciders, IssuedAt: decided, Expiry: decided.Add(a.DecisionTokenTTL(org))}
	if a.Action != nil {
		c.Action = *a.Action
	}
	return c, nil
}

// GateDecisionClaims are the claims of the decision token of check c, an
// allow by policy: no deciders, holding for ttl after the check.
func GateDecisionClaims(c *GateCheck, issuer string, ttl time.Duration) (decisiontoken.Claims, error) {
	sum, err := decisiontoken.InputSHA256(c.Input)
	if err != nil {
		return decisiontoken.Claims{}, err
	}
	return decisiontoken.Claims{Issuer: issuer, Subject: c.ID, Organization: c.OrganizationID, Action: c.Action,
		InputSHA256: sum, Deciders: []string{}, IssuedAt: c.CreatedAt, Expiry: c.CreatedAt.Add(ttl)}, nil
}

// DecisionTokenTTL is how long the decision tokens of a's checks and of
// the approvals they raise hold: its own setting, else its organisation's.
func (a *Action) DecisionTokenTTL(org *Organization) time.Duration {
	return tokenTTL(a.DecisionTokenTTLSeconds, org)
}

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
func (s *Store) DecisionSigner(ctx context.Context) (*DecisionSigner, error) {
	k, private, err := s.ActiveSigningKey(ctx, DecisionFamily)
	if err != nil {
		return nil, err
	}
	return &DecisionSigner{KeyID: k.ID, key: private}, nil
}

// SignDecision signs c with the active decision key, its kid filled in:
// the one way anything (an approval's persist, the gate's allow) issues a
// decision token.
func (s *Store) SignDecision(ctx context.Context, c decisiontoken.Claims) (string, error) {
	d, err := s.DecisionSigner(ctx)
	if err != nil {
		return "", err
	}
	return d.Sign(c)
}
