package mcp

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listed is every tool as a client sees it, over an in-memory transport.
func listed(t *testing.T) map[string]*sdkmcp.Tool {
	t.Helper()
	ctx := context.Background()
	st, ct := sdkmcp.NewInMemoryTransports()
	ss, err := NewServer(Options{}).Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	out := map[string]*sdkmcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// TestInputSchemasFromAPI: an argument that is an API field has, as a
// client lists it, the type, enum, format and limits of the API's
// property, and its description.
func TestInputSchemasFromAPI(t *testing.T) {
	t.Parallel()
	doc, err := apiDoc()
	require.NoError(t, err)
	tools := listed(t)
	if os.Getenv("MCP_SHOW_SCHEMAS") != "" {
		b, _ := json.MarshalIndent(tools["ask_human"].InputSchema, "", "  ")
		t.Log(string(b))
	}
	for name, fields := range apiFields {
		tool := tools[name]
		require.NotNil(t, tool, name)
		var in map[string]any
		b, _ := json.Marshal(tool.InputSchema)
		require.NoError(t, json.Unmarshal(b, &in))
		for _, f := range fields {
			got, _ := dig(in, "properties", f.Name).(map[string]any)
			require.NotNil(t, got, "%s.%s", name, f.Name)
			want, err := resolve(doc, dig(doc, "components", "schemas", f.Schema, "properties", f.Name), 0)
			require.NoError(t, err)
			for _, k := range []string{"type", "enum", "format", "minLength", "maxLength", "minItems", "maxItems", "minimum", "items", "pattern", "default"} {
				assert.Equal(t, want.(map[string]any)[k], got[k], "%s.%s: %s", name, f.Name, k)
			}
			if d, _ := want.(map[string]any)["description"].(string); d != "" {
				assert.True(t, strings.HasSuffix(got["description"].(string), strings.TrimSpace(d)), "%s.%s: description", name, f.Name)
			}
		}
	}
	// The enumerations a model needs most, spelled out.
	assert.Equal(t, []any{"low", "medium", "high", "critical"}, dig(schemaMap(t, tools["request_approval"]), "properties", "risk", "enum"))
	assert.Equal(t, []any{"text", "long_text", "number", "date", "choice", "multi_choice", "boolean"},
		dig(schemaMap(t, tools["ask_human"]), "properties", "questions", "items", "properties", "kind", "enum"))
	// ask_human's description names every kind the API takes.
	for _, kind := range dig(doc, "components", "schemas", "QuestionKind", "enum").([]any) {
		assert.Contains(t, tools["ask_human"].Description, kind.(string))
	}
	assert.Equal(t, "date-time", dig(schemaMap(t, tools["ask_human"]), "properties", "dueAt", "format"))
	// An enumeration without a type, and any JSON, as the API has them.
	assert.Equal(t, []any{"succeeded", "failed"}, dig(schemaMap(t, tools["report_execution"]), "properties", "outcome", "enum"))
	assert.Equal(t, []any{"object", "array", "string", "number", "boolean"},
		dig(schemaMap(t, tools["report_execution"]), "properties", "result", "type"))
}

func schemaMap(t *testing.T, tool *sdkmcp.Tool) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(tool.InputSchema)
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

// TestInputSchemasFollowTheAPI: the schemas are built from the document,
// so a changed enumeration shows in the tool, and a field the API drops
// or retypes stops the server from starting rather than drifting.
func TestInputSchemasFollowTheAPI(t *testing.T) {
	t.Parallel()
	doc := func() map[string]any {
		d, err := apiDoc()
		require.NoError(t, err)
		var c map[string]any
		b, _ := json.Marshal(d)
		require.NoError(t, json.Unmarshal(b, &c))
		return c
	}
	build := func(d map[string]any) (*jsonschema.Schema, error) {
		in, err := jsonschema.For[approvalIn](nil)
		require.NoError(t, err)
		return in, withAPIFields(d, in, apiFields["request_approval"])
	}

	changed := doc()
	dig(changed, "components", "schemas").(map[string]any)["Risk"].(map[string]any)["enum"] = []any{"low", "severe"}
	in, err := build(changed)
	require.NoError(t, err)
	assert.Equal(t, []any{"low", "severe"}, in.Properties["risk"].Enum)

	dropped := doc()
	delete(dig(dropped, "components", "schemas", "ApprovalCreate", "properties").(map[string]any), "editableFields")
	_, err = build(dropped)
	require.ErrorContains(t, err, "the API's ApprovalCreate has no property editableFields")

	retyped := doc()
	dig(retyped, "components", "schemas", "ApprovalCreate", "properties").(map[string]any)["title"] = map[string]any{"type": "integer"}
	_, err = build(retyped)
	require.ErrorContains(t, err, "ApprovalCreate.title is [integer] in the API but [string] in the tool")

	// An untyped enumeration is a string only while its values are.
	renumbered := doc()
	dig(renumbered, "components", "schemas", "ReceiptCreate", "properties").(map[string]any)["outcome"] = map[string]any{"enum": []any{0, 1}}
	in, err = jsonschema.For[reportIn](nil)
	require.NoError(t, err)
	require.ErrorContains(t, withAPIFields(renumbered, in, apiFields["report_execution"]), "ReceiptCreate.outcome is [] in the API but [string] in the tool")

	// A tool argument the mapping names must exist in the tool.
	in, err = jsonschema.For[checkIn](nil)
	require.NoError(t, err)
	require.ErrorContains(t, withAPIFields(doc(), in, fromAPI("GateCheckRequest", "externalId")), "the tool has no argument externalId")

	// Every tool's own arguments stay its own: nothing maps a field twice.
	for name, fields := range apiFields {
		var names []string
		for _, f := range fields {
			names = append(names, f.Name)
		}
		slices.Sort(names)
		assert.Equal(t, len(names), len(slices.Compact(names)), name)
	}
}
