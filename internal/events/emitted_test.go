package events

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/sourcetest"
)

// TestNotYetEmittedMatchesTheCode keeps the not-yet-emitted list true: a
// kind is sent exactly when code outside this package names its constant
// (a workflow recording it, an API sending it). So a kind the code names
// must be off the list, and one it never names must be on it.
func TestNotYetEmittedMatchesTheCode(t *testing.T) {
	kindOf := constants(t, "catalogue.go")
	named := referencedOutside(t, "github.com/assent-hq/assent/internal/events", filepath.Join("internal", "events"))
	for name, kind := range kindOf {
		if !Valid(kind) {
			continue // a request type, not an event kind
		}
		if named[name] {
			assert.True(t, IsEmitted(kind), "%s (events.%s) is used by the code: take it off notYetEmitted", kind, name)
		} else {
			assert.False(t, IsEmitted(kind), "nothing outside internal/events uses events.%s: add %s to notYetEmitted", name, kind)
		}
	}
	assert.True(t, IsEmitted(ApprovalApproved))
	assert.False(t, IsEmitted("no.such.kind"))
	for _, k := range NotYetEmitted() {
		assert.True(t, Valid(k), "%q is listed as not yet emitted but is no kind", k)
	}
}

// constants maps the names of file's string constants to their values.
func constants(t *testing.T, file string) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	require.NoError(t, err)
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
		return true
	})
	return out
}

// referencedOutside returns the identifiers of the package at importPath
// that the repository's non-test Go files name, skipping the package's own
// folder skip (relative to the repository root).
func referencedOutside(t *testing.T, importPath, skip string) map[string]bool {
	uses, err := sourcetest.Uses(filepath.Join("..", ".."), importPath, filepath.ToSlash(skip))
	require.NoError(t, err)
	require.NotEmpty(t, uses, "no file outside %s imports %s", skip, importPath)
	named := map[string]bool{}
	for name := range uses {
		named[name] = true
	}
	return named
}

func TestNotYetEmittedIsInCatalogueOrder(t *testing.T) {
	all := Kinds()
	idx := func(k string) int { return slices.Index(all, k) }
	assert.True(t, slices.IsSortedFunc(NotYetEmitted(), func(a, b string) int { return idx(a) - idx(b) }))
}

// TestWebhooksDocNamesWhatIsSent: docs/webhooks.md names every kind sent
// and calls none unsent while the code emits them all.
func TestWebhooksDocNamesWhatIsSent(t *testing.T) {
	b, err := os.ReadFile("../../docs/webhooks.md")
	require.NoError(t, err)
	doc := string(b)
	for _, k := range WebhookKinds() {
		if IsEmitted(k) {
			assert.Contains(t, doc, "`"+k+"`", "docs/webhooks.md describes %s", k)
		}
	}
	if len(NotYetEmitted()) == 0 {
		for _, unsent := range []string{"nothing sends it", "still to come", "not sent yet"} {
			assert.NotContains(t, doc, unsent, "every kind is sent")
		}
	}
}
