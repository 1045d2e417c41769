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
		// hold holds code, refused with at at, to an apperr code whose
		// status is not 500. A parameter passed through (Refuse's own body,
		// the core refusing with its kind's code) is held where it is set.
		hold := func(code ast.Expr, at token.Pos, param bool) {
			if _, ok := code.(*ast.Ident); ok && param {
				return
			}
			if !isApperr(code) {
				t.Errorf("%s: a workflow refuses with %s; use an apperr code", fset.Position(at), types(code))
				return
			}
			name := code.(*ast.SelectorExpr).Sel.Name
			value, known := codes[name]
			require.True(t, known, "apperr.%s is not a code", name)
			found[value] = true
			assert.NotEqual(t, http.StatusInternalServerError, apperr.Status(value), "%s: %s maps to 500", fset.Position(at), value)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				// A kind's code for a person it does not ask.
				if n.Name.Name == "NotAsked" && n.Body != nil && len(n.Body.List) == 1 {
					if ret, ok := n.Body.List[0].(*ast.ReturnStmt); ok && len(ret.Results) == 1 {
						hold(ret.Results[0], n.Pos(), false)
					}
				}
			case *ast.KeyValueExpr:
				// A kind's code for an act refused (workflows.ActRefusals).
				if key, ok := n.Key.(*ast.Ident); ok && key.Name == "ActedCode" {
					hold(n.Value, n.Pos(), false)
				}
			case *ast.CallExpr:
				switch fn := n.Fun.(type) {
				case *ast.Ident:
					if fn.Name == "Refuse" && len(n.Args) > 0 {
						hold(n.Args[0], n.Pos(), true)
					}
				case *ast.SelectorExpr:
					switch {
					case fn.Sel.Name == "Refuse" && len(n.Args) > 0:
						hold(n.Args[0], n.Pos(), true)
					case fn.Sel.Name == "NewNonRetryableApplicationError" && len(n.Args) > 1:
						hold(n.Args[1], n.Pos(), true)
					}
				}
			}
			return true
		})
	}
	// The approval workflow refuses in at least these ways; finding fewer
	// means the test no longer sees the calls.
	for _, c := range []string{apperr.InvalidState, apperr.QuestionPending, apperr.NotAnApprover, apperr.InvalidRequest} {
		assert.True(t, found[c], "no refusal with %s found", c)
	}
}

// isApperr reports whether e names a constant of package apperr.
func isApperr(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "apperr"
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
