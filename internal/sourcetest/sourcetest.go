// Package sourcetest reads the repository's Go source for the tests that
// hold rules no compiler checks: which packages name what.
package sourcetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Uses returns, for each identifier of the package importPath that the
// non-test Go files below root name (as pkg.Name), the files naming it,
// relative to root with forward slashes. Hidden folders, node_modules,
// testdata and the folders skip names (relative to root) are not read.
func Uses(root, importPath string, skip ...string) (map[string][]string, error) {
	uses := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || slices.Contains(skip, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		local := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				local = filepath.Base(importPath)
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && !slices.Contains(uses[sel.Sel.Name], rel) {
					uses[sel.Sel.Name] = append(uses[sel.Sel.Name], rel)
				}
			}
			return true
		})
		return nil
	})
	return uses, err
}
