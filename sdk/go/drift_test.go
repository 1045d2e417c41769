package assent

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/assent-hq/assent/sdk/go/internal/gen"
)

// drift compares the document with the SDK as compiled: every operation
// has its method on the client (and the table names no other), the query
// parameters match, each object schema's properties are its type's JSON
// fields, and the error codes are the constants. It returns each
// difference.
func drift(doc []byte) []string {
	var d struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas    map[string]map[string]any
			Parameters map[string]map[string]any
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return []string{err.Error()}
	}
	var out []string
	seen := map[string]bool{}
	client := reflect.ValueOf(New("http://x", "k"))
	for path, item := range d.Paths {
		for method, raw := range item {
			var op struct {
				OperationID string `json:"operationId"`
				Parameters  []map[string]any
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			seen[op.OperationID] = true
			if gen.Unexposed[op.OperationID] {
				continue
			}
			sdk, ok := operations[op.OperationID]
			if !ok {
				out = append(out, "operation "+op.OperationID+" has no method")
				continue
			}
			if sdk.Path != path || sdk.Method != strings.ToUpper(method) {
				out = append(out, "operation "+op.OperationID+" moved")
			}
			if !hasMethod(client, sdk.SDKMethod) {
				out = append(out, "operation "+op.OperationID+": the client has no "+sdk.SDKMethod)
			}
			var query []string
			for _, p := range op.Parameters {
				if ref, ok := p["$ref"].(string); ok {
					p = d.Components.Parameters[ref[strings.LastIndex(ref, "/")+1:]]
				}
				if p["in"] == "query" {
					query = append(query, p["name"].(string))
				}
			}
			sort.Strings(query)
			have := slices.Sorted(slices.Values(sdk.Query))
			if !slices.Equal(query, have) {
				out = append(out, "operation "+op.OperationID+": query "+strings.Join(have, ",")+" but the document has "+strings.Join(query, ","))
			}
		}
	}
	for id := range operations {
		if !seen[id] {
			out = append(out, "the SDK has operation "+id+", which the document lacks")
		}
	}
	for name, s := range d.Components.Schemas {
		props, required := merged(d.Components.Schemas, s)
		typ, ok := schemaTypes[name]
		if !ok {
			if len(props) > 0 {
				out = append(out, "schema "+name+" has no type")
			}
			continue
		}
		fields := map[string]reflect.StructField{}
		for i := 0; i < typ.NumField(); i++ {
			if tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]; tag != "" && tag != "-" {
				fields[tag] = typ.Field(i)
			}
		}
		for p, ps := range props {
			f, ok := fields[p]
			if !ok {
				out = append(out, "schema "+name+": field "+p+" missing from "+typ.Name())
				continue
			}
			// Required fields are always sent; optional ones omitted when empty.
			omits := strings.Contains(f.Tag.Get("json"), ",omitempty")
			if req := slices.Contains(required, p); req == omits {
				out = append(out, fmt.Sprintf("schema %s: field %s required %v in the document, not in %s", name, p, req, typ.Name()))
			}
			if isNullable(d.Components.Schemas, ps) && !nilable(f.Type) {
				out = append(out, "schema "+name+": field "+p+" may be null but "+typ.Name()+"."+f.Name+" cannot be nil")
			}
		}
		for f := range fields {
			if _, ok := props[f]; !ok {
				out = append(out, "schema "+name+": "+typ.Name()+" has "+f+", which the document lacks")
			}
		}
	}
	for name := range schemaTypes {
		if _, ok := d.Components.Schemas[name]; !ok {
			out = append(out, "the SDK has schema "+name+", which the document lacks")
		}
	}
	var codes []string
	for _, c := range errorCodes {
		codes = append(codes, string(c))
	}
	var want []string
	collectCodes(doc, &want)
	if !slices.Equal(codes, want) {
		out = append(out, "error codes differ: SDK "+strings.Join(codes, ",")+" document "+strings.Join(want, ","))
	}
	sort.Strings(out)
	return out
}

// merged is a schema's properties and required names, its allOf parts
// (by reference) merged in.
func merged(schemas map[string]map[string]any, s map[string]any) (map[string]any, []string) {
	props := map[string]any{}
	var required []string
	all, _ := s["allOf"].([]any)
	for _, part := range all {
		ps := resolved(schemas, part)
		p, r := merged(schemas, ps)
		for k, v := range p {
			props[k] = v
		}
		required = append(required, r...)
	}
	own, _ := s["properties"].(map[string]any)
	for k, v := range own {
		props[k] = v
	}
	return props, append(required, asStrings(s["required"])...)
}

func resolved(schemas map[string]map[string]any, v any) map[string]any {
	s, _ := v.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		return schemas[ref[strings.LastIndex(ref, "/")+1:]]
	}
	return s
}

// isNullable: the type names null, or an anyOf/oneOf offers it.
func isNullable(schemas map[string]map[string]any, v any) bool {
	s := resolved(schemas, v)
	if s == nil {
		return false
	}
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			return true
		}
	case []any:
		if slices.Contains(t, any("null")) {
			return true
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		opts, _ := s[k].([]any)
		for _, o := range opts {
			if isNullable(schemas, o) {
				return true
			}
		}
	}
	return false
}

func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return t == reflect.TypeFor[json.RawMessage]()
}

func collectCodes(doc []byte, out *[]string) {
	var v any
	_ = json.Unmarshal(doc, &v)
	set := map[string]bool{}
	var walk func(any)
	walk = func(x any) {
		switch n := x.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				if e, ok := props["error"].(map[string]any); ok {
					ep, _ := e["properties"].(map[string]any)
					code, _ := ep["code"].(map[string]any)
					if c, ok := code["const"].(string); ok {
						set[c] = true
					}
					for _, c := range asStrings(code["enum"]) {
						set[c] = true
					}
				}
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(v)
	for c := range set {
		*out = append(*out, c)
	}
	sort.Strings(*out)
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// hasMethod finds "Approvals.Create" or "Admin.Members.List" on the client.
func hasMethod(v reflect.Value, path string) bool {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		v = reflect.Indirect(v).FieldByName(p)
		if !v.IsValid() {
			return false
		}
	}
	return v.MethodByName(parts[len(parts)-1]).IsValid()
}

func TestDrift(t *testing.T) {
	doc, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if diffs := drift(doc); len(diffs) > 0 {
		t.Fatalf("the SDK and sdk/openapi.json differ:\n%s", strings.Join(diffs, "\n"))
	}
	// The test must see each kind of drift: mutate copies of the document.
	mutations := map[string]func(d map[string]any){
		"a field removed": func(d map[string]any) {
			delete(schemaOf(d, "Approval")["properties"].(map[string]any), "approvedInput")
		},
		"a field added": func(d map[string]any) {
			schemaOf(d, "ApprovalCreate")["properties"].(map[string]any)["urgency"] = map[string]any{"type": "string"}
		},
		"an operation removed": func(d map[string]any) {
			delete(d["paths"].(map[string]any)["/api/v1/approvals/{id}/cancel"].(map[string]any), "post")
		},
		"an operation added": func(d map[string]any) {
			d["paths"].(map[string]any)["/api/v1/approvals/{id}/snooze"] = map[string]any{"post": map[string]any{"operationId": "snoozeApproval"}}
		},
		"a query parameter removed": func(d map[string]any) {
			op := d["paths"].(map[string]any)["/api/v1/approvals"].(map[string]any)["get"].(map[string]any)
			params := op["parameters"].([]any)
			op["parameters"] = params[1:]
		},
		"a required field made optional": func(d map[string]any) {
			s := schemaOf(d, "ApprovalCreate")
			s["required"] = slices.DeleteFunc(slices.Clone(s["required"].([]any)), func(x any) bool { return x == "title" })
		},
		"an optional field made required": func(d map[string]any) {
			s := schemaOf(d, "ReportCreate")
			s["required"] = append(s["required"].([]any), "slug")
		},
		"a field added beside an allOf": func(d map[string]any) {
			schemaOf(d, "CreatedKey")["properties"].(map[string]any)["shownAt"] = map[string]any{"type": "string"}
		},
		"a required field of an allOf schema made optional": func(d map[string]any) {
			delete(schemaOf(d, "CreatedKey"), "required")
		},
		"a field made nullable": func(d map[string]any) {
			schemaOf(d, "Approval")["properties"].(map[string]any)["title"] = map[string]any{"type": []any{"string", "null"}}
		},
		"an error code added": func(d map[string]any) {
			env := schemaOf(d, "ErrorEnvelope")
			env["properties"].(map[string]any)["error"] = map[string]any{"properties": map[string]any{"code": map[string]any{"const": "brand_new"}}}
		},
	}
	for name, mutate := range mutations {
		var d map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		mutate(d)
		changed, _ := json.Marshal(d)
		diffs := drift(changed)
		if len(diffs) == 0 {
			t.Errorf("the drift test missed %s", name)
		}
		t.Logf("%s: %s", name, strings.Join(diffs, "; "))
	}
}

func schemaOf(d map[string]any, name string) map[string]any {
	return d["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
}
