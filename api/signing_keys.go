package api

import (
	"encoding/base64"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/instance"
	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/wire"
)

// Where the instance publishes the public halves of its signing keys, one
// path per key family, for anyone to check what it signed offline.
const (
	// EvidenceKeysPath lists the keys evidence exports are signed with.
	EvidenceKeysPath = "/.well-known/assent/evidence-keys"
	// DecisionKeysPath lists the keys decision tokens are signed with.
	DecisionKeysPath = "/.well-known/jwks.json"
)

// signingJWK is an Ed25519 public key as a JSON Web Key (RFC 8037), with
// when it signed.
type signingJWK struct {
	KeyType   string         `json:"kty"`
	Curve     string         `json:"crv"`
	X         string         `json:"x"`
	KeyID     string         `json:"kid"`
	Use       string         `json:"use"`
	Algorithm string         `json:"alg"`
	CreatedAt wiretime.Time  `json:"createdAt"`
	RetiredAt *wiretime.Time `json:"retiredAt"`
}

// keySet lists every key of the family, retired ones included, as a JWK
// set (instance.Service.KeySet).
func (h *handlers) keySet(f instance.KeyFamily) gin.HandlerFunc {
	return func(c *gin.Context) {
		keys, err := h.instance.KeySet(c.Request.Context(), f)
		if err != nil {
			Fail(c, err)
			return
		}
		c.Header("Cache-Control", "public, max-age=300")
		c.JSON(http.StatusOK, gin.H{"keys": wire.All(keys, func(k *instance.SigningKey) signingJWK {
			return signingJWK{KeyType: "OKP", Curve: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.PublicKey), KeyID: k.ID,
				Use: "sig", Algorithm: "EdDSA", CreatedAt: wiretime.New(k.CreatedAt), RetiredAt: wiretime.Ptr(k.RetiredAt)}
		})})
	}
}
