package events

import (
	"crypto/rand"
	"encoding/hex"
)

// Signing secret prefixes say what a secret signs, so one pasted in the
// wrong place is recognised. Signing and verifying with them is package
// webhook's, the one place the scheme lives.
const (
	WebhookSecretPrefix  = "whsec_"
	CallbackSecretPrefix = "asnt_cbs_"
)

// NewSecret makes a signing secret: 256 random bits in hex after prefix.
func NewSecret(prefix string) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + hex.EncodeToString(b)
}
