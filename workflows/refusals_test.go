package workflows_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/apperr"
)

// Every code a workflow refuses an Update with reaches the caller as that
// code's status: one that mapped to 500 would tell a person "the server
// failed" when they were refused. The test reads the workflow sources (the
// core's, and each kind's workflow*.go in its own folder), so a new refusal
// is held to this without anyone listing it.
func TestEveryRefusalMapsToAStatusOtherThan500(t *testing.T) {
	codes := apperrCodes(t)
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	kinds, err := filepath.Glob("../*/workflow*.go")
	require.NoError(t, err)
	files = append(files, kinds...)
	found := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var code ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "Refuse" && len(call.Args) > 0 {
					code = call.Args[0]
				}
			case *ast.SelectorExpr:
				switch {
				case fn.Sel.Name == "Refuse" && len(call.Args) > 0:
					code = call.Args[0]
				case fn.Sel.Name == "NewNonRetryableApplicationError" && len(call.Args) > 1:
					code = call.Args[1]
				}
			}
			if code == nil {
				return true
			}
			sel, ok := code.(*ast.SelectorExpr)
			if ok {
				x, isIdent := sel.X.(*ast.Ident)
				ok = isIdent && x.Name == "apperr"
			}
			if !ok {
				// Parameters passed through (Refuse's own body) are checked
				// where refuse is called.
				if _, param := code.(*ast.Ident); !param {
					t.Errorf("%s: a workflow refuses with %s; use an apperr code", fset.Position(call.Pos()), types(code))
				}
				return true
			}
			value, known := codes[sel.Sel.Name]
			require.True(t, known, "apperr.%s is not a code", sel.Sel.Name)
			found[value] = true
			assert.NotEqual(t, http.StatusInternalServerError, apperr.Status(value), "%s: %s maps to 500", fset.Position(call.Pos()), value)
			return true
		})
	}
	// The approval workflow refuses in at least these ways; finding fewer
	// means the test no longer sees the calls.
	for _, c := range []string{apperr.InvalidState, apperr.QuestionPending, apperr.NotAnApprover, apperr.InvalidRequest} {
		assert.True(t, found[c], "no refusal with %s found", c)
	}
}

// apperrCodes reads the code constants of package apperr: name → value.
func apperrCodes(t *testing.T) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "internal", "apperr", "apperr.go"), nil, 0)
	require.NoError(t, err)
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}

func types(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value
	case *ast.SelectorExpr:
		return types(e.X) + "." + e.Sel.Name
	case *ast.Ident:
		return e.Name
	}
	return "an expression"
}
