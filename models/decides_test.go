package models_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelsDecidesNothing: the store finds records and reports what a
// write changed; whether a caller may do something, and what a record's
// state means for it, are the services'. So the only answers models gives
// in apperr's words are a lookup that found nothing (NotFound), a unique
// key's refusal (Conflict), a cursor this store never issued
// (InvalidRequest) and a broken invariant (Internal).
func TestModelsDecidesNothing(t *testing.T) {
	t.Parallel()
	codes := apperrCodes(t)
	allowed := []string{"NotFound", "Conflict", "InvalidRequest", "Internal"}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "apperr" && codes[sel.Sel.Name] {
				assert.True(t, slices.Contains(allowed, sel.Sel.Name),
					"%s answers apperr.%s: a refusal is the service's to decide; have the store report what it found", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}

// apperrCodes are the names of apperr's error codes (its string
// constants).
func apperrCodes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "internal", "apperr", "apperr.go"), nil, 0)
	require.NoError(t, err)
	codes := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, spec := range g.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					codes[name.Name] = true
				}
			}
		}
	}
	require.True(t, codes["Forbidden"] && codes["NotFound"], "apperr's codes were not found: the test would prove nothing")
	return codes
}
