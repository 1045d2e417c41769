package api

import (
	"bytes"
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
	t.Parallel()
	r := gin.New()
	r.Use(errorsMiddleware(slog.Default()))
	r.GET("/x", func(c *gin.Context) {
		c.Set(principalKey, models.Actor{Key: &models.APIKey{Scopes: models.StringList{"approvals:read"}}})
	}, RequireScope("approvals:write"), func(c *gin.Context) { c.Status(http.StatusNoContent) })
	r.GET("/y", func(c *gin.Context) {
		c.Set(principalKey, models.Actor{Key: &models.APIKey{Scopes: models.StringList{"approvals:write"}}})
	}, RequireScope("approvals:write"), func(c *gin.Context) { c.Status(http.StatusNoContent) })

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

// The access log names a request's route, never its path: a decision
// link's token stays out of it.
func TestAccessLogNamesTheRoute(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	r := gin.New()
	r.Use(accessLog(log))
	r.GET("/approvals/:id/link/:token", func(c *gin.Context) { c.Status(http.StatusOK) })

	const token = "q8Jx0bXo7-secret-token"
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/approvals/apr_1/link/"+token, nil))
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/nowhere/"+token, nil))
	assert.NotContains(t, logged.String(), token, "whoever reads the logs cannot replay the link")
	assert.Contains(t, logged.String(), `"route":"/approvals/:id/link/:token"`)
	assert.Contains(t, logged.String(), `"route":""`, "no route matched")
}
