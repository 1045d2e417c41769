package api

import (
	"encoding/base64"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/wiretime"
	"github.com/assent-hq/assent/models"
	"github.com/assent-hq/assent/wire"
)

// EvidenceKeysPath is where the instance publishes the public keys its
// evidence exports are signed with, for anyone to check them offline.
const EvidenceKeysPath = "/.well-known/assent/evidence-keys"

// evidenceJWK is an Ed25519 public key as a JSON Web Key (RFC 8037), with
// when it signed.
type evidenceJWK struct {
	KeyType   string         `json:"kty"`
	Curve     string         `json:"crv"`
	X         string         `json:"x"`
	KeyID     string         `json:"kid"`
	Use       string         `json:"use"`
	Algorithm string         `json:"alg"`
	CreatedAt wiretime.Time  `json:"createdAt"`
	RetiredAt *wiretime.Time `json:"retiredAt"`
}

// evidenceKeys lists every evidence key, retired ones included, as a JWK
// set; the instance's first key is made here if none exists yet.
func (h *handlers) evidenceKeys(c *gin.Context) {
	ctx := c.Request.Context()
	if _, _, err := h.store.SigningEvidenceKey(ctx); err != nil {
		fail(c, err)
		return
	}
	keys, err := h.store.EvidenceKeys(ctx)
	if err != nil {
		fail(c, err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, gin.H{"keys": wire.All(keys, func(k *models.EvidenceKey) evidenceJWK {
		return evidenceJWK{KeyType: "OKP", Curve: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.PublicKey), KeyID: k.ID,
			Use: "sig", Algorithm: "EdDSA", CreatedAt: wiretime.New(k.CreatedAt), RetiredAt: wiretime.Ptr(k.RetiredAt)}
	})})
}
