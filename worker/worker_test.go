package worker_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/grpc"

	"github.com/assent-hq/assent/app"
	"github.com/assent-hq/assent/worker"
)

// TestEveryWorkflowHasASavedHistory: each workflow type the worker
// registers has at least one saved history, which the workflows package's
// replay test replays on every run; without one, a change that breaks its
// runs in flight would go unnoticed.
func TestEveryWorkflowHasASavedHistory(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "workflows", "testdata", "histories", "*.json"))
	require.NoError(t, err)
	var saved []string
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		f.Close()
		require.NoError(t, err, file)
		saved = append(saved, history.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName())
	}
	for _, wf := range worker.Workflows(app.Workers()) {
		assert.True(t, slices.Contains(saved, wf.Name),
			"workflow %s has no saved history in workflows/testdata/histories: record one (see its README)", wf.Name)
	}
}

// TestSearchAttributesRefusedNamesWhatToAdd: a server that refuses to add
// search attributes (Temporal Cloud lets only its own tools) stops the
// process with the attributes to add there, not a bare gRPC error; one
// that allows it gets them, once.
func TestSearchAttributesRefusedNamesWhatToAdd(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	deny := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if refuse.Load() && strings.HasSuffix(info.FullMethod, "/AddSearchAttributes") {
			return nil, serviceerror.NewPermissionDenied("request unauthorized", "")
		}
		return next(ctx, req)
	}
	ts := temporaltest.NewServer(temporaltest.WithT(t),
		temporaltest.WithBaseServerOptions(temporal.WithChainedFrontendGrpcInterceptors(deny)))
	c := ts.GetDefaultClient()
	ns := ts.GetDefaultNamespace()

	err := worker.RegisterSearchAttributes(context.Background(), c, ns)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the namespace "+ns+" lacks Assent's search attributes AssentExternalId (Keyword), AssentKind (Keyword)")
	assert.Contains(t, err.Error(), "tcld or its web UI")
	assert.Contains(t, err.Error(), "request unauthorized")

	refuse.Store(false)
	require.NoError(t, worker.RegisterSearchAttributes(context.Background(), c, ns))
	require.NoError(t, worker.RegisterSearchAttributes(context.Background(), c, ns), "a second run finds them all")
}

// TestEveryActivityIsRegisteredOnce: each activity name the workflows call
// (the Activity… constants of workflows/names.go and of each kind's
// names.go) is the method of exactly one struct the worker registers, and
// those structs have no other exported method, which would become an
// activity nobody calls.
func TestEveryActivityIsRegisteredOnce(t *testing.T) {
	// The names of no kind (workflows/names.go) and each kind's (its
	// folder's names.go).
	files, err := filepath.Glob(filepath.Join("..", "*", "names.go"))
	require.NoError(t, err)
	require.Contains(t, files, filepath.Join("..", "workflows", "names.go"))
	names := map[string]bool{}
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if v, ok := n.(*ast.ValueSpec); ok && strings.HasPrefix(v.Names[0].Name, "Activity") {
				name, err := strconv.Unquote(v.Values[0].(*ast.BasicLit).Value)
				require.NoError(t, err)
				names[name] = true
			}
			return true
		})
	}
	require.Contains(t, names, "PersistApproval", "an approval's activity names were not found: the test would prove little")
	registered := map[string]int{}
	for _, a := range worker.Activities(worker.Deps{Kinds: app.Workers()}) {
		typ := reflect.TypeOf(a)
		for i := range typ.NumMethod() {
			m := typ.Method(i).Name
			registered[m]++
			assert.True(t, names[m], "%s.%s would be registered as an activity no workflow calls", typ, m)
		}
	}
	for name := range names {
		assert.Equal(t, 1, registered[name], "activity %s is registered %d times", name, registered[name])
	}
}
