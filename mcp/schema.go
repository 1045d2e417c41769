package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/assent-hq/assent/sdk"
)

// apiField names a tool argument that is an API request field: its
// schema (type, enum, format, limits, description) is the API's own,
// taken from the OpenAPI document when the server starts, so the two
// cannot drift. Arguments that are the tool's own (waitSeconds,
// expiresIn, requestId…) keep the schema inferred from the Go struct.
type apiField struct {
	Schema string // a component of the document, such as ApprovalCreate
	Name   string // the property, named the same in the tool
}

func fromAPI(schema string, names ...string) []apiField {
	out := make([]apiField, len(names))
	for i, n := range names {
		out[i] = apiField{schema, n}
	}
	return out
}

// apiFields maps each tool to its arguments that are API fields.
var apiFields = map[string][]apiField{
	"request_approval": fromAPI("ApprovalCreate", "title", "description", "risk", "input", "editableFields", "approvers", "flowId"),
	"answer_question":  fromAPI("AnswerCreate", "questionId", "answer"),
	"ask_human":        fromAPI("CollectionCreate", "title", "description", "questions", "respondents", "dueAt", "flowId"),
	"publish_report":   fromAPI("ReportCreate", "title", "content", "slug", "audience", "changeSummary"),
	"request_review": append(fromAPI("ReviewCreate", "reportId", "title", "reviewers", "instructions", "requiredApprovals"),
		fromAPI("ReportCreate", "content")...),
	"check_action":     fromAPI("GateCheckRequest", "action", "input", "flowId"),
	"report_execution": fromAPI("ReceiptCreate", "decisionToken", "input", "outcome", "result", "startedAt", "finishedAt"),
}

// apiDoc is the API's OpenAPI document, parsed once.
var apiDoc = sync.OnceValues(func() (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(sdk.OpenAPIJSON(), &doc); err != nil {
		return nil, err
	}
	return doc, nil
})

// apiProperty is the schema of a property of a component of doc, its
// references resolved in place and "null" left out of its types: a tool
// argument the caller does not give is left out, never null.
func apiProperty(doc map[string]any, f apiField) (*jsonschema.Schema, error) {
	comp, _ := dig(doc, "components", "schemas", f.Schema).(map[string]any)
	if comp == nil {
		return nil, fmt.Errorf("the API has no schema %s", f.Schema)
	}
	prop, _ := dig(comp, "properties", f.Name).(map[string]any)
	if prop == nil {
		return nil, fmt.Errorf("the API's %s has no property %s", f.Schema, f.Name)
	}
	resolved, err := resolve(doc, prop, 0)
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", f.Schema, f.Name, err)
	}
	b, err := json.Marshal(resolved)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s.%s: %w", f.Schema, f.Name, err)
	}
	return &s, nil
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// resolve copies v with every $ref to a component replaced by the
// component (keys beside the $ref, such as a default, kept) and "null"
// dropped from type lists.
func resolve(doc map[string]any, v any, depth int) (any, error) {
	if depth > 20 {
		return nil, fmt.Errorf("references nested too deep")
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i := range x {
			r, err := resolve(doc, x[i], depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := map[string]any{}
		if ref, ok := x["$ref"].(string); ok {
			name, found := strings.CutPrefix(ref, "#/components/schemas/")
			target, _ := dig(doc, "components", "schemas", name).(map[string]any)
			if !found || target == nil {
				return nil, fmt.Errorf("unresolved reference %s", ref)
			}
			r, err := resolve(doc, target, depth+1)
			if err != nil {
				return nil, err
			}
			for k, v := range r.(map[string]any) {
				out[k] = v
			}
		}
		for k, v := range x {
			if k == "$ref" {
				continue
			}
			if list, ok := v.([]any); ok && k == "type" {
				out[k] = withoutNull(list)
				continue
			}
			r, err := resolve(doc, v, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

func withoutNull(list []any) any {
	list = slices.DeleteFunc(slices.Clone(list), func(v any) bool { return v == "null" })
	if len(list) == 1 {
		return list[0]
	}
	return list
}

// typesOf is a schema's types, "null" left out; an enumeration of
// strings without a type (the API's outcome) is a string.
func typesOf(s *jsonschema.Schema) []string {
	ts := s.Types
	if s.Type != "" {
		ts = []string{s.Type}
	}
	if len(ts) == 0 && len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(v any) bool { _, ok := v.(string); return !ok }) {
		ts = []string{"string"}
	}
	return slices.DeleteFunc(slices.Clone(ts), func(t string) bool { return t == "null" })
}

// withAPIFields replaces the inferred schema of each API field of a tool
// by the API's. The Go type must take what the API's schema allows: a
// field whose type no longer matches is an error, found at start.
func withAPIFields(doc map[string]any, in *jsonschema.Schema, fields []apiField) error {
	for _, f := range fields {
		inferred := in.Properties[f.Name]
		if inferred == nil {
			return fmt.Errorf("the tool has no argument %s", f.Name)
		}
		p, err := apiProperty(doc, f)
		if err != nil {
			return err
		}
		// A Go any (no type) takes whatever the API allows (a receipt's result).
		if got, want := typesOf(p), typesOf(inferred); len(want) > 0 && !slices.Equal(got, want) {
			return fmt.Errorf("%s.%s is %v in the API but %v in the tool", f.Schema, f.Name, got, want)
		}
		// The tool's words say what the argument is for the model; the
		// API's add what it takes.
		p.Description = joinSentences(inferred.Description, p.Description)
		in.Properties[f.Name] = p
	}
	return nil
}

func joinSentences(a, b string) string {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasSuffix(a, "."):
		return a + " " + b
	}
	return a + ". " + b
}
