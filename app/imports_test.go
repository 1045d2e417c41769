package app_test

import (
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assent-hq/assent/internal/sourcetest"
)

const module = "github.com/assent-hq/assent/"

// imports lists what each non-test file of the package in dir imports,
// by file.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	return importsOf(t, filepath.Join("..", dir, "*.go"))
}

// importsOf lists what each non-test file matching pattern imports.
func importsOf(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	require.NoError(t, err)
	require.NotEmpty(t, files, "nothing matches %s: the test would prove nothing", pattern)
	out := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range parsed.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			out[f] = append(out[f], path)
		}
	}
	return out
}

// adapters are the adapters' folders, each kind's page (<kind>/page, a
// part of web) and routes (<kind>/rest, a part of api), which live in
// their kind's folder, among them.
func adapters(t *testing.T) []string {
	t.Helper()
	out := []string{"api", "web", "slackapp", "reportsite", "mcp"}
	for _, part := range []string{"page", "rest"} {
		dirs, err := filepath.Glob(filepath.Join("..", "*", part))
		require.NoError(t, err)
		require.NotEmpty(t, dirs, "no kind's %s found: the tests would not hold them", part)
		for _, d := range dirs {
			out = append(out, filepath.ToSlash(strings.TrimPrefix(d, ".."+string(filepath.Separator))))
		}
	}
	return out
}

// adapterOf is the adapter dir belongs to: a kind's page is web's, its
// routes api's.
func adapterOf(dir string) string {
	switch {
	case strings.HasSuffix(dir, "/page"):
		return "web"
	case strings.HasSuffix(dir, "/rest"):
		return "api"
	}
	return dir
}

// TestAdaptersImportNoModels: the adapters call the services and name
// records through the services' aliases; only their tests reach the store.
func TestAdaptersImportNoModels(t *testing.T) {
	for _, dir := range adapters(t) {
		for f, paths := range imports(t, dir) {
			require.NotContains(t, paths, module+"models", "%s imports models: call a service and name its records through the service", f)
		}
	}
}

// TestAdaptersImportNoWorkflowsNorEachOther: an adapter reaches requests
// through the services, never their workflows, takes the services it
// calls rather than the composition root's bag of all, and needs no other
// adapter (what two share lives below both: the contract in sdk, the
// report hosts' addresses behind web.ReportHosts).
func TestAdaptersImportNoWorkflowsNorEachOther(t *testing.T) {
	all := adapters(t)
	for _, dir := range all {
		for f, paths := range imports(t, dir) {
			for _, p := range paths {
				name, ours := strings.CutPrefix(p, module)
				if !ours {
					continue
				}
				require.NotEqual(t, "workflows", name, "%s imports workflows: ask a service", f)
				require.NotEqual(t, "app", name, "%s imports app: take the services it calls in its Deps", f)
				require.False(t, name != adapterOf(dir) && slices.Contains(all, name), "%s imports the adapter %s", f, name)
			}
		}
	}
}

// TestSerializersImportNoServices: wire turns records into their JSON and
// nothing more, so the services that build their events with it, and the
// adapters, may all import it; what a value means (a token's lifetime, an
// expiry's default) is read from the record, not decided here.
func TestSerializersImportNoServices(t *testing.T) {
	for f, paths := range imports(t, "wire") {
		for _, p := range paths {
			name, ours := strings.CutPrefix(p, module)
			if ours {
				require.True(t, name == "models" || strings.HasPrefix(name, "internal/"),
					"%s imports %s: a serializer reads records only", f, name)
			}
		}
	}
}

// workflowImports are all that workflow code may import: values, the SDK's
// workflow API and the names it shares with the services. Nothing here
// reads the clock, the network, the disk or the database, so a workflow
// stays deterministic wherever its folder puts it.
var workflowImports = []string{
	"cmp", "encoding/json", "errors", "fmt", "maps", "math/big", "slices", "strconv", "strings", "time",
	"go.temporal.io/sdk/workflow", "go.temporal.io/sdk/temporal", "go.temporal.io/api/enums/v1",
	module + "workflows", module + "internal/apperr", module + "internal/events", module + "internal/questions",
	module + "internal/states",
}

// TestWorkflowCodeImportsOnlyWhatReplays: the workflow core (workflows/)
// and each kind's workflow files (workflow*.go in its own folder) import
// only workflowImports.
func TestWorkflowCodeImportsOnlyWhatReplays(t *testing.T) {
	files := imports(t, "workflows")
	maps.Copy(files, importsOf(t, "../*/workflow*.go"))
	for f, paths := range files {
		for _, p := range paths {
			require.Contains(t, workflowImports, p, "%s imports %s, which workflow code may not", f, p)
		}
	}
}

// TestOnlyTheCompositionRootsHoldTheWholeStore: a service declares the
// store it uses (an aggregate, or an interface of its own); only what
// builds processes, and the one value every kind's service and every
// activity are made from (requests.Deps, requests.ActivityEnv), name
// *models.Store (docs/decisions.md, "Stores: composed once, narrowed by
// each service").
func TestOnlyTheCompositionRootsHoldTheWholeStore(t *testing.T) {
	uses, err := sourcetest.Uses("..", module+"models", "app", "worker", "cmd", "internal/testenv", "models")
	require.NoError(t, err)
	require.NotEmpty(t, uses, "nothing names models: the test would prove nothing")
	kindsBase := []string{"requests/fields.go", "requests/transition.go"}
	holders := slices.DeleteFunc(uses["Store"], func(f string) bool { return slices.Contains(kindsBase, f) })
	require.Empty(t, holders, "these name the whole *models.Store: declare the store the service uses instead")
}
