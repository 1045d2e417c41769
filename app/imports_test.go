package app_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdaptersImportNoModels: the adapters call the services and name
// records through the services' aliases; only their tests reach the store.
func TestAdaptersImportNoModels(t *testing.T) {
	const forbidden = "github.com/assent-hq/assent/models"
	for _, dir := range []string{"api", "web", "slackapp", "reportsite"} {
		files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, files, dir)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range parsed.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				assert.NotEqual(t, forbidden, path, "%s imports models: call a service and name its records through the service", f)
			}
		}
	}
}
