package scopes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNotYetAvailableMatchesTheRoutes keeps NotYetAvailable true: a scope is
// available exactly when a route of the API (api/router.go and each
// kind's <kind>/rest) requires it.
func TestNotYetAvailableMatchesTheRoutes(t *testing.T) {
	// The constant names a route requires: inside RequireScope(…) or
	// PersonActs(…) in the API's files and the kinds' routes (*/rest), or
	// as a request kind's Read or Write scope (RequestRoutes), which its
	// routes require.
	required := map[string]bool{}
	files, err := filepath.Glob(filepath.Join("..", "..", "api", "*.go"))
	require.NoError(t, err)
	kinds, err := filepath.Glob(filepath.Join("..", "..", "*", "rest", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, kinds, "no kind's routes found (*/rest)")
	for _, file := range append(files, kinds...) {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				name := ""
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				if name == "RequireScope" || name == "PersonActs" {
					for _, arg := range n.Args {
						if sel, ok := arg.(*ast.SelectorExpr); ok {
							required[sel.Sel.Name] = true
						}
					}
				}
			case *ast.KeyValueExpr:
				if key, ok := n.Key.(*ast.Ident); ok && (key.Name == "Read" || key.Name == "Write") {
					if sel, ok := n.Value.(*ast.SelectorExpr); ok {
						required[sel.Sel.Name] = true
					}
				}
			}
			return true
		})
	}
	require.NotEmpty(t, required, "the API's files have no RequireScope(scopes.…) calls to read")

	byName := map[string]string{
		"ApprovalsRead": ApprovalsRead, "ApprovalsWrite": ApprovalsWrite,
		"ReviewsRead": ReviewsRead, "ReviewsWrite": ReviewsWrite,
		"CollectionsRead": CollectionsRead, "CollectionsWrite": CollectionsWrite,
		"FlowsRead": FlowsRead, "FlowsWrite": FlowsWrite,
		"ReportsRead": ReportsRead, "ReportsWrite": ReportsWrite, "ReportsShare": ReportsShare,
		"CommentsWrite": CommentsWrite, "AudiencesRead": AudiencesRead, "SchedulesWrite": SchedulesWrite,
		"GateCheck": GateCheck, "ReceiptsWrite": ReceiptsWrite,
	}
	require.Len(t, byName, len(All), "a scope is missing from this test's table")
	for name, s := range byName {
		if required[name] {
			assert.True(t, IsAvailable(s), "a route requires %s: take it off NotYetAvailable", s)
		} else {
			assert.False(t, IsAvailable(s), "no route requires %s: add it to NotYetAvailable", s)
		}
	}
}

func TestAvailable(t *testing.T) {
	assert.Contains(t, Available(), ApprovalsWrite)
	assert.Contains(t, Available(), ReviewsWrite)
	assert.Len(t, Available(), len(All)-len(NotYetAvailable))
	for _, s := range NotYetAvailable {
		assert.True(t, Valid(s), "%q is not yet available but is no scope", s)
	}
	assert.False(t, IsAvailable("approvals:delete"))
	// A copy: changing it leaves the next call alone.
	a := Available()
	a[0] = "changed"
	assert.Equal(t, ApprovalsRead, Available()[0])
}
