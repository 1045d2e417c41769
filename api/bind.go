package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/bodyread"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/requests"
)

// DefaultBodyLimit bounds JSON request bodies; routes that take documents
// raise it.
const DefaultBodyLimit = 1 << 20

const bodyKey = "assent.body"

// readBody reads the whole request body once, within limit and
// bodyread.Timeout, and checks its content type. Handlers and the
// idempotency check share the bytes; Bind (or jsonBody) checks them as
// JSON. It runs after authenticate, so a caller without a key is answered
// from the headers alone.
func readBody(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Body == nil || c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead {
			c.Next()
			return
		}
		lift := bodyread.Bound(c.Writer)
		body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
		lift()
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				Fail(c, apperr.New(apperr.PayloadTooLarge, "the request body is larger than %d bytes", limit))
				return
			}
			Fail(c, apperr.New(apperr.InvalidRequest, "the request body could not be read"))
			return
		}
		if len(body) > 0 {
			mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
			if err != nil || mt != "application/json" {
				Fail(c, apperr.New(apperr.UnsupportedMedia, "send the request body as application/json"))
				return
			}
			if len(bytes.TrimSpace(body)) == 0 {
				// Not JSON, and not the absent body an optional one may be.
				Fail(c, apperr.New(apperr.InvalidRequest, "the request body is blank: send a JSON object, or no body at all"))
				return
			}
		}
		c.Set(bodyKey, body)
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		c.Next()
	}
}

// MaxJSONDepth is how deeply a request body's objects and arrays may nest.
const MaxJSONDepth = 64

// checkJSON holds a JSON body, in one pass over its tokens, to what the
// stores and handlers can take, naming the field: no NUL character or
// byte that is not UTF-8 in a string or key (PostgreSQL refuses them),
// nesting at most MaxJSONDepth deep, numbers within a double, and no key
// twice in one object (decoding would keep one silently), and nothing
// after the value. Given the Go type the body decodes into (into, nil for
// a free-form body), it also refuses what that type does not know and
// what decoding and the validator would read as "left out" (leftOut), so
// that decoding is the only other pass. A body that is not JSON passes:
// Bind names its syntax error.
func checkJSON(body []byte, into reflect.Type) error {
	var stack []jsonFrame
	done := func() { // a value ended: the parent moves on
		if n := len(stack); n > 0 {
			stack[n-1].index++
			stack[n-1].wantKey = !stack[n-1].array
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for began := false; ; began = true {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or a syntax error bind names
		}
		if began && len(stack) == 0 {
			return apperr.New(apperr.InvalidRequest, "the request body has data after its JSON value")
		}
		raw := body[start:dec.InputOffset()]
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			done()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if err := stack[n-1].takeKey(stack, tok.(string), raw); err != nil {
				return err
			}
			continue
		}
		want := valueType(stack, into)
		if err := leftOut(stack, tok); err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			if len(stack) == MaxJSONDepth {
				return apperr.Field(apperr.InvalidRequest, jsonPath(stack), "%s nests objects and arrays more than %d levels deep", jsonPath(stack), MaxJSONDepth)
			}
			stack = append(stack, jsonFrame{array: v == '[', wantKey: v == '{', typ: container(want, v)})
			continue
		case string:
			if err := validate.Text(jsonPath(stack), v); err != nil {
				return err
			}
			if !utf8.Valid(raw) {
				return validate.Text(jsonPath(stack), string(raw))
			}
		case json.Number:
			if _, err := strconv.ParseFloat(v.String(), 64); err != nil {
				return apperr.Field(apperr.InvalidRequest, jsonPath(stack), "%s is %s, beyond the range of a double (about ±1.8e308)", jsonPath(stack), v)
			}
		}
		done()
	}
}

// jsonFrame is one open object or array of a body being walked.
type jsonFrame struct {
	array   bool
	index   int
	key     string
	wantKey bool
	keys    map[string]struct{} // an object's keys so far
	// typ is the struct, slice or array type the object or array decodes
	// into; nil where the body is free-form (maps, any, json.RawMessage)
	// or decoding will name a wrong type.
	typ reflect.Type
	// field is what the key just read decodes into, in an object of typ.
	field reflect.StructField
}

// takeKey reads key as the next key of f, the last frame of stack.
func (f *jsonFrame) takeKey(stack []jsonFrame, key string, raw []byte) error {
	f.key, f.wantKey = key, false
	if strings.IndexByte(key, 0) >= 0 || !utf8.Valid(raw) {
		f.key = strings.Trim(strconv.QuoteToASCII(key), `"`)
		return apperr.Field(apperr.InvalidRequest, jsonPath(stack), "the key %s must be UTF-8 text without a NUL character (\\u0000)", jsonPath(stack))
	}
	if _, twice := f.keys[key]; twice {
		return apperr.Field(apperr.InvalidRequest, jsonPath(stack), "%s is given twice: a key may appear once in an object", jsonPath(stack))
	}
	if f.keys == nil {
		f.keys = map[string]struct{}{}
	}
	f.keys[key] = struct{}{}
	if f.typ == nil {
		return nil
	}
	field, known := fieldByJSONName(f.typ, key)
	switch {
	case known:
		f.field = field
		return nil
	case key == "expiresIn" && len(stack) == 1 && hasField(f.typ, "expiresAt"):
		return apperr.Field(apperr.InvalidRequest, "expiresIn", "unknown field \"expiresIn\": the REST API takes expiresAt, an RFC 3339 time; expiresIn (seconds, default one day) is the SDKs' convenience, which they send as expiresAt")
	}
	if at := jsonPath(stack); len(stack) > 1 {
		return apperr.Field(apperr.InvalidRequest, at, "unknown field %q at %s", key, at)
	}
	return apperr.Field(apperr.InvalidRequest, key, "unknown field %q", key)
}

// valueType is the Go type the value the walk is at decodes into, nil if
// it is free-form or unknown.
func valueType(stack []jsonFrame, into reflect.Type) reflect.Type {
	n := len(stack)
	switch {
	case n == 0:
		return into
	case stack[n-1].typ == nil:
		return nil
	case stack[n-1].array:
		return stack[n-1].typ.Elem()
	}
	return stack[n-1].field.Type
}

// container is the type an object or array opened by d is walked as:
// want's struct for an object, its slice or array for an array, else nil
// (and nil for a type that decodes itself).
func container(want reflect.Type, d json.Delim) reflect.Type {
	for want != nil && want.Kind() == reflect.Pointer {
		want = want.Elem()
	}
	switch {
	case want == nil || reflect.PointerTo(want).Implements(unmarshalerType):
		return nil
	case d == '{' && want.Kind() == reflect.Struct, d == '[' && (want.Kind() == reflect.Slice || want.Kind() == reflect.Array):
		return want
	}
	return nil
}

// leftOut refuses what decoding and the validator would read as "left
// out": a null where the document's type does not include it (the Go
// field says it does with the tag nullable:"true"), or in a list of
// values, and "" for a field of listed values (its validate tag's oneof),
// which omitempty passes as absent. Free-form values (input, metadata,
// answers) are not looked into.
func leftOut(stack []jsonFrame, tok json.Token) error {
	n := len(stack)
	if n == 0 || stack[n-1].typ == nil || (tok != nil && tok != "") {
		return nil
	}
	f, at := &stack[n-1], joinPath(stack)
	switch {
	case f.array && tok == nil && f.typ.Elem().Kind() != reflect.Interface:
		return apperr.Field(apperr.InvalidRequest, at, "%s is null: a list holds values", at)
	case f.array:
	case tok == nil && f.field.Tag.Get("nullable") != "true":
		return apperr.Field(apperr.InvalidRequest, at, "%s is null: give it a value or leave it out", at)
	case tok == "":
		if values, ok := oneOf(f.field); ok {
			return apperr.Field(apperr.InvalidRequest, at, "%s is empty: give one of %s, or leave it out", at, strings.Join(values, ", "))
		}
	}
	return nil
}

// jsonPath names the value the walk is at ("input.items[2].name"); the
// body itself is "body".
func jsonPath(stack []jsonFrame) string {
	if p := joinPath(stack); p != "" {
		return p
	}
	return "body"
}

func joinPath(stack []jsonFrame) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case f.array:
			fmt.Fprintf(&b, "[%d]", f.index)
		case b.Len() > 0:
			b.WriteString("." + f.key)
		default:
			b.WriteString(f.key)
		}
	}
	return b.String()
}

// plainParams refuses a path or query parameter no column can hold (a NUL
// character, bytes that are not UTF-8) and an empty query value (?limit=,
// which the document does not allow and a handler would read as absent),
// naming it, before any handler looks it up; checkJSON does the same for
// bodies.
func plainParams(c *gin.Context) {
	for _, p := range c.Params {
		if err := validate.Text(p.Key, p.Value); err != nil {
			Fail(c, err)
			return
		}
	}
	for k, vs := range c.Request.URL.Query() {
		if validate.Text(k, k) != nil {
			Fail(c, apperr.New(apperr.InvalidRequest, "a query parameter's name must be UTF-8 text without a NUL character (\\u0000)"))
			return
		}
		for _, v := range vs {
			if v == "" {
				Fail(c, apperr.Field(apperr.InvalidRequest, k, "the query parameter %s is empty: give it a value or leave it out", k))
				return
			}
			if err := validate.Text(k, v); err != nil {
				Fail(c, err)
				return
			}
		}
	}
	c.Next()
}

func rawBody(c *gin.Context) []byte {
	if b, ok := c.Get(bodyKey); ok {
		return b.([]byte)
	}
	return nil
}

// jsonBody is the body of a route that stores it as it came, checked as
// JSON (checkJSON).
func jsonBody(c *gin.Context) ([]byte, error) {
	body := rawBody(c)
	return body, checkJSON(body, nil)
}

// Bind decodes the body strictly into dst (unknown fields, wrong types and
// trailing data are refused, naming the field) and validates it. An empty
// body is an empty object, so a missing field is reported by name.
func Bind(c *gin.Context, dst any) error {
	body := bytes.TrimSpace(rawBody(c))
	if len(body) == 0 {
		body = []byte("{}")
	}
	if body[0] != '{' {
		return apperr.New(apperr.InvalidRequest, "the request body must be a JSON object")
	}
	if err := checkJSON(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	// checkJSON refused unknown fields and data after the object.
	if err := json.Unmarshal(body, dst); err != nil {
		return decodeError(err, body)
	}
	return validate.Struct(dst)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// oneOf is the values f's validate tag lists with oneof, if it does.
func oneOf(f reflect.StructField) ([]string, bool) {
	for _, rule := range strings.Split(f.Tag.Get("validate"), ",") {
		if values, ok := strings.CutPrefix(rule, "oneof="); ok {
			return strings.Fields(values), true
		}
	}
	return nil, false
}

// fieldByJSONName finds the field of struct t that decodes the key name,
// in t or a struct it embeds.
func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner, ok := fieldByJSONName(ft, name); ok {
					return inner, true
				}
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name || strings.EqualFold(tag, name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// NoFields holds the body of a route that takes none (the document's
// Empty) to what bind holds every body to: absent, or an object without
// fields. Otherwise a field the caller thinks meaningful would be ignored.
func NoFields(c *gin.Context) {
	if err := Bind(c, &struct{}{}); err != nil {
		Fail(c, err)
		return
	}
	c.Next()
}

// hasField reports whether struct t has a field named name in JSON.
func hasField(t reflect.Type, name string) bool {
	_, ok := fieldByJSONName(t, name)
	return ok
}

func decodeError(err error, body []byte) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return apperr.New(apperr.InvalidRequest, "malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return apperr.New(apperr.InvalidRequest, "the request body must be a JSON object")
		}
		field := typ.Field
		if p := pathAt(body, typ.Offset); p != "" {
			field = p
		}
		return apperr.Field(apperr.InvalidRequest, field, "%s must be %s, not %s", field, jsonType(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.New(apperr.InvalidRequest, "malformed JSON: the body ends early")
	}
	return apperr.New(apperr.InvalidRequest, "invalid JSON: %v", err)
}

// pathAt names the value of body that ends at offset down to the element
// ("approvers[0]", "factors[1].label"): encoding/json's type errors give
// the field path without the indices. It returns "" if none ends there.
func pathAt(body []byte, offset int64) string {
	var stack []jsonFrame
	done := func() { // a value ended: the parent moves on
		if n := len(stack); n > 0 {
			stack[n-1].index++
			stack[n-1].wantKey = !stack[n-1].array
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			done()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			stack[n-1].key, stack[n-1].wantKey = tok.(string), false
			continue
		}
		if dec.InputOffset() >= offset {
			return joinPath(stack)
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, jsonFrame{wantKey: true})
		case json.Delim('['):
			stack = append(stack, jsonFrame{array: true})
		default:
			done()
		}
	}
}

func jsonType(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}

// page reads limit and cursor: limit defaults to 50 and may be at most 200.
func page(c *gin.Context) (requests.Page, error) {
	p := requests.Page{Limit: 50, Cursor: c.Query("cursor")}
	if s := c.Query("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 200 {
			return p, apperr.Field(apperr.InvalidRequest, "limit", "limit must be an integer from 1 to 200")
		}
		p.Limit = n
	}
	return p, nil
}

// BoolParam reads an optional true|false query parameter: nil when absent.
func BoolParam(c *gin.Context, name string) (*bool, error) {
	switch v := c.Query(name); v {
	case "":
		return nil, nil
	case "true", "false":
		b := v == "true"
		return &b, nil
	}
	return nil, apperr.Field(apperr.InvalidRequest, name, "%s must be true or false", name)
}
