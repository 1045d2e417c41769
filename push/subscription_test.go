package push

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSubscriptionCheck: a subscription's keys are a P-256 point and a
// 16-byte secret in base64url (padded or not), its endpoint an http(s)
// URL.
func TestSubscriptionCheck(t *testing.T) {
	t.Parallel()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	require.NoError(t, err)
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	ok := Subscription{Endpoint: "https://push.example/send/abc", P256dh: base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()),
		Auth: base64.RawURLEncoding.EncodeToString(secret)}
	require.NoError(t, checkSubscription(ok))
	padded := ok
	padded.Auth += "=="
	assert.NoError(t, checkSubscription(padded), "padding is accepted")
	for name, bad := range map[string]func(*Subscription){
		"no endpoint":  func(n *Subscription) { n.Endpoint = "" },
		"not a URL":    func(n *Subscription) { n.Endpoint = "javascript:alert(1)" },
		"short p256dh": func(n *Subscription) { n.P256dh = n.P256dh[:40] },
		"p256dh off curve": func(n *Subscription) {
			raw, _ := base64.RawURLEncoding.DecodeString(n.P256dh)
			raw[40] ^= 1
			n.P256dh = base64.RawURLEncoding.EncodeToString(raw)
		},
		"short auth":      func(n *Subscription) { n.Auth = n.Auth[:10] },
		"auth not base64": func(n *Subscription) { n.Auth = "!!!!!!!!!!!!!!!!!!!!!!" },
	} {
		n := ok
		bad(&n)
		assert.Error(t, checkSubscription(n), name)
	}
}
