package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/assent-hq/assent/internal/apperr"
	"github.com/assent-hq/assent/internal/bodyread"
	"github.com/assent-hq/assent/internal/validate"
	"github.com/assent-hq/assent/requests"
	"github.com/assent-hq/assent/wire"
)

// DefaultBodyLimit bounds JSON request bodies; routes that take documents
// raise it.
const DefaultBodyLimit = 1 << 20

const bodyKey = "assent.body"

// readBody reads the whole request body once, within limit and
// bodyread.Timeout, and checks its content type. Handlers and the
// idempotency check share the bytes. It runs after authenticate, so a
// caller without a key is answered from the headers alone.
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
				fail(c, apperr.New(apperr.PayloadTooLarge, "the request body is larger than %d bytes", limit))
				return
			}
			fail(c, apperr.New(apperr.InvalidRequest, "the request body could not be read"))
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
			if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
				fail(c, apperr.New(apperr.UnsupportedMedia, "send the request body as application/json"))
				return
			}
		}
		c.Set(bodyKey, body)
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		c.Next()
	}
}

func rawBody(c *gin.Context) []byte {
	if b, ok := c.Get(bodyKey); ok {
		return b.([]byte)
	}
	return nil
}

// bind decodes the body strictly into dst (unknown fields, wrong types and
// trailing data are refused, naming the field) and validates it. An empty
// body is an empty object, so a missing field is reported by name.
func bind(c *gin.Context, dst any) error {
	body := bytes.TrimSpace(rawBody(c))
	if len(body) == 0 {
		body = []byte("{}")
	}
	if body[0] != '{' {
		return apperr.New(apperr.InvalidRequest, "the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, body)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apperr.New(apperr.InvalidRequest, "the request body has data after the JSON object")
	}
	return validate.Struct(dst)
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
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return apperr.Field(apperr.InvalidRequest, field, "unknown field %q", field)
	}
	return apperr.New(apperr.InvalidRequest, "invalid JSON: %v", err)
}

// pathAt names the value of body that ends at offset down to the element
// ("approvers[0]", "factors[1].label"): encoding/json's type errors give
// the field path without the indices. It returns "" if none ends there.
func pathAt(body []byte, offset int64) string {
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
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
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true})
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

// listResponse is the envelope of every list.
type listResponse[T any] struct {
	Data       []T     `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

func newList[S any, T any](rows []S, next string, ser func(*S) T) listResponse[T] {
	out := listResponse[T]{Data: wire.All(rows, ser)}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}
