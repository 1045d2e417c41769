package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/scopes"
)

// ProtectedResourcePath is where the MCP endpoint's OAuth 2.0 Protected
// Resource Metadata (RFC 9728) is served: at the root, and with the
// resource's path appended (/mcp), which clients try first.
const (
	ProtectedResourcePath = "/.well-known/oauth-protected-resource"
	MCPPath               = "/mcp"
)

// protectedResource tells an MCP client that /mcp takes the API's bearer
// keys in the Authorization header. It names no authorization server:
// keys are issued by an organisation's administrators, not through OAuth.
func (h *handlers) protectedResource(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*")
	c.Header("Cache-Control", "public, max-age=3600")
	c.JSON(http.StatusOK, gin.H{
		"resource":                 h.baseURL + MCPPath,
		"resource_name":            "Assent",
		"resource_documentation":   h.baseURL + "/api/docs",
		"bearer_methods_supported": []string{"header"},
		"scopes_supported":         scopes.Available(),
	})
}
