package api

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"slices"

	"github.com/gin-gonic/gin"
	"sigs.k8s.io/yaml"

	"github.com/assent-hq/assent/internal/apperr"
)

// OpenAPIYAML is the API's contract, api/openapi.yaml: every operation the
// router serves, kept true by the tests that validate every request and
// response against it.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// OpenAPIJSON is the document as JSON, for code that builds on its
// definitions (the MCP tools' input schemas).
func OpenAPIJSON() []byte { return slices.Clone(openAPIJSON) }

// The viewer at /api/docs: Swagger UI, vendored by docs/vendor.sh, started
// by docs/init.js.
//
//go:embed docs/index.html docs/init.js docs/swagger-ui-bundle.js docs/swagger-ui.css
var docsFiles embed.FS

// openAPIJSON is the document as JSON, converted once at start, and its
// ETag.
var openAPIJSON, openAPIETag = func() ([]byte, string) {
	body, err := yaml.YAMLToJSON(OpenAPIYAML)
	if err != nil {
		panic(fmt.Sprintf("api/openapi.yaml: %v", err)) // the tests load it
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	return body, `"` + hex.EncodeToString(sum[:16]) + `"`
}()

// docsPolicy lets the viewer run its own files only: no inline script, no
// other origin.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var docsTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// serveOpenAPI answers the document to anyone: it holds no secret, and a
// client reads it before it has a key.
func serveOpenAPI(c *gin.Context) {
	c.Header("ETag", openAPIETag)
	c.Header("Cache-Control", "no-cache")
	if c.GetHeader("If-None-Match") == openAPIETag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", openAPIJSON)
}

// serveDocs answers the viewer's page at /api/docs and its files below it.
func serveDocs(c *gin.Context) {
	name := c.Param("file")
	if name == "" {
		name = "index.html"
	}
	body, err := docsFiles.ReadFile("docs/" + name)
	if err != nil {
		Fail(c, apperr.New(apperr.NotFound, "no such endpoint: %s %s", c.Request.Method, c.Request.URL.Path))
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	c.Data(http.StatusOK, docsTypes[path.Ext(name)], body)
}
