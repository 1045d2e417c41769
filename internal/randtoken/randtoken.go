// Package randtoken makes the secrets people carry in links and cookies:
// sign-in links, session cookies, CSRF tokens, OIDC state.
package randtoken

import (
	"crypto/rand"
	"encoding/base64"
)

// New returns 256 random bits, URL-safe (43 characters).
func New() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
