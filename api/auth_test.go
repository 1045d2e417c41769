package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/models"
)

func TestRequireScopeNamesTheMissingScope(t *testing.T) {
	r := gin.New()
	r.Use(errorsMiddleware(slog.Default()))
	r.GET("/x", func(c *gin.Context) {
		c.Set(principalKey, &models.Principal{Key: &models.APIKey{Scopes: models.StringList{"approvals:read"}}})
	}, requireScope("approvals:write"), func(c *gin.Context) { c.Status(http.StatusNoContent) })
	r.GET("/y", func(c *gin.Context) {
		c.Set(principalKey, &models.Principal{Key: &models.APIKey{Scopes: models.StringList{"approvals:write"}}})
	}, requireScope("approvals:write"), func(c *gin.Context) { c.Status(http.StatusNoContent) })

	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
	require.Equal(t, 403, w.Code)
	var env struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &env))
	assert.Equal(t, "insufficient_scope", env.Error.Code)
	assert.Contains(t, env.Error.Message, "approvals:write")

	w = httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/y", nil))
	assert.Equal(t, 204, w.Code)
}
