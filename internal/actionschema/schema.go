// Package actionschema holds a registered action's input to its JSON
// Schema (draft 2020-12): compiled once when the action is saved, and
// checked against every input the gate is asked about and every
// correction a person makes to a gated approval.
package actionschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// resource is the name the schema is compiled under; nothing else can be
// loaded, so a $ref reaches only inside the schema itself.
const resource = "urn:assent:action-input"

// Schema is a compiled input schema.
type Schema struct{ compiled *jsonschema.Schema }

// Violation is the first place an input breaks its schema.
type Violation struct {
	// Path names the failing value as the API names fields: "amount",
	// "lines[2].sku"; empty for the input as a whole.
	Path    string
	Message string
	// Says is what the value must be in a person's words, without naming
	// it ("must be at most 1,000"), for the pages to put after the field's
	// label; empty when the schema's keyword has no such phrase.
	Says string
}

func (v *Violation) Error() string {
	if v.Path == "" {
		return "input " + v.Message
	}
	return v.Path + " " + v.Message
}

// refuseLoads keeps a schema from reading files or the network through a
// $ref: the library's default loader would open file:// URLs.
type refuseLoads struct{}

func (refuseLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas may only refer inside themselves, not to %s", url)
}

var (
	printer = message.NewPrinter(language.English)
	// cache keeps compiled schemas by their text, up to cacheMax, then
	// starts again: schemas of actions changed or deleted since do not
	// pile up.
	cacheMu sync.Mutex
	cache   = map[string]*Schema{}
)

const cacheMax = 512

// Compile reads a JSON Schema document. One without $schema is read as
// draft 2020-12. The error is a sentence for whoever wrote the schema.
func Compile(doc []byte) (*Schema, error) {
	cacheMu.Lock()
	cached, ok := cache[string(doc)]
	cacheMu.Unlock()
	if ok {
		return cached, nil
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %v", err)
	}
	if _, ok := parsed.(map[string]any); !ok {
		return nil, errors.New("the schema must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoads{})
	if err := c.AddResource(resource, parsed); err != nil {
		return nil, fmt.Errorf("the schema cannot be read: %v", err)
	}
	compiled, err := c.Compile(resource)
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON Schema: %s", strings.ReplaceAll(err.Error(), resource, "the schema"))
	}
	if loops(compiled) {
		return nil, errors.New("the schema's references loop: a $ref leads back to itself without reading any of the input")
	}
	s := &Schema{compiled: compiled}
	cacheMu.Lock()
	if len(cache) >= cacheMax {
		clear(cache)
	}
	cache[string(doc)] = s
	cacheMu.Unlock()
	return s, nil
}

// Validate returns nil when input (a JSON document) meets the schema, and
// otherwise the first violation: the deepest cause of the error, taking
// at each level the cause first by place (byPlace).
func (s *Schema) Validate(input []byte) *Violation {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &Violation{Message: "is not JSON"}
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Violation{Message: err.Error()}
	}
	for len(ve.Causes) > 0 {
		ve = slices.MinFunc(ve.Causes, byPlace)
	}
	if k, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok {
		slices.Sort(k.Properties)
	}
	return &Violation{Path: fieldPath(ve.InstanceLocation), Message: ve.ErrorKind.LocalizedString(printer), Says: says(ve.ErrorKind)}
}

// says words the keywords a person correcting a value can meet as what
// the value must be. The library's own messages ("maximum: got 5,000,
// want 1,000") stay the API's.
func says(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Maximum:
		return printer.Sprintf("must be at most %v", ratio(k.Want))
	case *kind.Minimum:
		return printer.Sprintf("must be at least %v", ratio(k.Want))
	case *kind.ExclusiveMaximum:
		return printer.Sprintf("must be less than %v", ratio(k.Want))
	case *kind.ExclusiveMinimum:
		return printer.Sprintf("must be more than %v", ratio(k.Want))
	case *kind.MultipleOf:
		return printer.Sprintf("must be a multiple of %v", ratio(k.Want))
	case *kind.MaxLength:
		return printer.Sprintf("must be at most %d characters", k.Want)
	case *kind.MinLength:
		return printer.Sprintf("must be at least %d characters", k.Want)
	case *kind.MaxItems:
		return printer.Sprintf("may have at most %d entries", k.Want)
	case *kind.MinItems:
		return printer.Sprintf("must have at least %d entries", k.Want)
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, t := range k.Want {
			want[i] = typeWords[t]
			if want[i] == "" {
				want[i] = t
			}
		}
		return "must be " + strings.Join(want, " or ")
	case *kind.Enum:
		if len(k.Want) == 1 {
			return "must be " + display(k.Want[0])
		}
		want := make([]string, len(k.Want))
		for i, v := range k.Want {
			want[i] = display(v)
		}
		return "must be one of " + strings.Join(want, ", ")
	case *kind.Const:
		return "must be " + display(k.Want)
	case *kind.Pattern:
		return "must match the pattern " + k.Want
	case *kind.Format:
		return "must be a valid " + k.Want
	}
	return ""
}

// typeWords are JSON types as a person names them.
var typeWords = map[string]string{"string": "text", "number": "a number", "integer": "a whole number",
	"boolean": "true or false", "object": "an object", "array": "a list", "null": "empty"}

// ratio is a schema's limit as the printer writes numbers (1,000; 0.5).
func ratio(r *big.Rat) any {
	if r.IsInt() && r.Num().IsInt64() {
		return r.Num().Int64()
	}
	f, _ := r.Float64()
	return f
}

// display writes an allowed value as a person reads it: text in quotes,
// anything else as JSON.
func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// byPlace orders errors by the value and then the schema keyword at fault.
// The library lists an object's errors in map order, so the first listed
// would differ between runs, and the same input must be refused naming the
// same field every time.
func byPlace(a, b *jsonschema.ValidationError) int {
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c
	}
	return strings.Compare(a.SchemaURL, b.SchemaURL)
}

// fieldPath writes a JSON pointer's tokens as the API names fields.
func fieldPath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if isIndex(t) {
			fmt.Fprintf(&b, "[%s]", t)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

func isIndex(t string) bool {
	if t == "" {
		return false
	}
	for _, r := range t {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// loops reports whether the schema's references form a cycle that reads
// no input: such a schema compiles but refuses every input, so it is
// refused when saved.
func loops(compiled *jsonschema.Schema) bool {
	var ve *jsonschema.ValidationError
	if !errors.As(compiled.Validate(nil), &ve) {
		return false
	}
	var walk func(*jsonschema.ValidationError) bool
	walk = func(e *jsonschema.ValidationError) bool {
		if _, ok := e.ErrorKind.(*kind.RefCycle); ok {
			return true
		}
		for _, c := range e.Causes {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(ve)
}
