package actionschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const refund = `{
  "type": "object",
  "required": ["amount", "currency"],
  "additionalProperties": false,
  "properties": {
    "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 500},
    "currency": {"enum": ["EUR", "USD"]},
    "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string", "minLength": 3}}}}
  }
}`

func TestValidate(t *testing.T) {
	s, err := Compile([]byte(refund))
	require.NoError(t, err)
	cases := []struct {
		input, path, message string
	}{
		{`{"amount": 120, "currency": "EUR"}`, "", ""},
		{`{"amount": 900, "currency": "EUR"}`, "amount", "maximum"},
		{`{"amount": "120", "currency": "EUR"}`, "amount", "want number"},
		{`{"amount": 1, "currency": "GBP"}`, "currency", "value must be one of"},
		{`{"currency": "EUR"}`, "", "missing property 'amount'"},
		{`{"amount": 1, "currency": "EUR", "to": "x"}`, "", "additional properties 'to' not allowed"},
		{`{"amount": 1, "currency": "EUR", "lines": [{"sku": "abcd"}, {"sku": "x"}]}`, "lines[1].sku", "minLength"},
		{`[1]`, "", "want object"},
	}
	for _, c := range cases {
		v := s.Validate([]byte(c.input))
		if c.message == "" {
			assert.Nil(t, v, c.input)
			continue
		}
		require.NotNil(t, v, c.input)
		assert.Equal(t, c.path, v.Path, c.input)
		assert.Contains(t, v.Message, c.message, c.input)
	}
}

func TestCompileRefuses(t *testing.T) {
	cases := map[string]string{
		`{"type": "object"`:              "not JSON",
		`[]`:                             "must be a JSON object",
		`{"type": "objekt"}`:             "not valid JSON Schema",
		`{"$ref": "file:///etc/passwd"}`: "may only refer inside themselves",
		`{"$ref": "https://example.com/schema.json"}`:               "may only refer inside themselves",
		`{"properties": {"a": {"minLength": "three"}}}`:             "not valid JSON Schema",
		`{"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/b"}`: "not valid JSON Schema",
		`{"$ref": "#"}`: "references loop",
		`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`: "references loop",
	}
	for doc, want := range cases {
		_, err := Compile([]byte(doc))
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
	}
	// A recursive schema that reads the input as it recurses is fine.
	tree, err := Compile([]byte(`{"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "number"}}}`))
	require.NoError(t, err)
	assert.Nil(t, tree.Validate([]byte(`{"child": {"child": {"n": 1}}}`)))
	assert.Equal(t, "child.child.n", tree.Validate([]byte(`{"child": {"child": {"n": "x"}}}`)).Path)
	// A reference inside the schema works.
	s, err := Compile([]byte(`{"$defs": {"id": {"type": "string"}}, "properties": {"id": {"$ref": "#/$defs/id"}}}`))
	require.NoError(t, err)
	assert.NotNil(t, s.Validate([]byte(`{"id": 3}`)))
	assert.Nil(t, s.Validate([]byte(`{"id": "3"}`)))
}

// The library lists an object's errors in map order; a workflow replaying
// a refusal must name the same field every time.
func TestValidateNamesTheSameViolation(t *testing.T) {
	s, err := Compile([]byte(`{"type": "object", "properties": {
	  "a": {"type": "number"}, "b": {"type": "number"}, "c": {"type": "number"}, "d": {"type": "number"}},
	  "patternProperties": {"^x": {"type": "number"}}, "additionalProperties": false}`))
	require.NoError(t, err)
	for range 50 {
		v := s.Validate([]byte(`{"d": "1", "c": "1", "b": "1", "a": "1"}`))
		require.NotNil(t, v)
		require.Equal(t, "a", v.Path)
		v = s.Validate([]byte(`{"z": 1, "y": 1, "w": 1}`))
		require.NotNil(t, v)
		require.Equal(t, "additional properties 'w', 'y', 'z' not allowed", v.Message)
	}
}

// TestViolationSaysItInWords: besides the library's message, kept for
// the API, a violation says what the value must be in a person's words,
// for the pages.
func TestViolationSaysItInWords(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"amount":{"type":"number","maximum":1000},
		"count":{"type":"integer"},"code":{"enum":["a","b"]},"note":{"type":"string","maxLength":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`{"amount":5000}`: "must be at most 1,000",
		`{"count":"x"}`:   "must be a whole number",
		`{"code":"z"}`:    `must be one of "a", "b"`,
		`{"note":"abcd"}`: "must be at most 3 characters",
	} {
		v := s.Validate([]byte(input))
		if v == nil || v.Says != want {
			t.Errorf("%s: says %+v, want %q", input, v, want)
		}
	}
	if v := s.Validate([]byte(`{"amount":5000}`)); v.Message != "maximum: got 5,000, want 1,000" {
		t.Errorf("the API's message changed: %q", v.Message)
	}
}
