package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A restricted field names what a restricted-fields rule hides: a bare
// name ("ssn") hides that key at every depth of the input and metadata; a
// dotted path ("customer.ssn") hides the key at that path only, arrays
// being looked through. Every surface that shows a request's input or
// metadata to a person goes through Redact.

// CheckRestrictedField refuses a name that could never match: empty, or a
// path with an empty segment.
func CheckRestrictedField(name string) error {
	for _, seg := range strings.Split(name, ".") {
		if strings.TrimSpace(seg) == "" {
			return fmt.Errorf("%q can never match a field: use a name such as ssn or a path such as customer.ssn", name)
		}
	}
	return nil
}

// Redact returns the JSON object raw without the members restricted names,
// at every depth, keeping the order and the exact text of everything
// else, and how many members it removed.
func Redact(raw []byte, restricted []string) ([]byte, int, error) {
	if len(restricted) == 0 || len(bytes.TrimSpace(raw)) == 0 {
		return raw, 0, nil
	}
	var b bytes.Buffer
	n, err := redact(&b, raw, "", restricted)
	if err != nil {
		return nil, 0, err
	}
	return b.Bytes(), n, nil
}

// RedactMember is Redact for one top-level member, for a surface that shows
// members one by one: hidden when the member itself is restricted, else
// its value without the restricted members inside it, and how many those
// were.
func RedactMember(name string, value []byte, restricted []string) (shown []byte, hidden bool, removed int, err error) {
	if hides(restricted, name, name) {
		return nil, true, 0, nil
	}
	if len(restricted) == 0 {
		return value, false, 0, nil
	}
	var b bytes.Buffer
	removed, err = redact(&b, value, name, restricted)
	return b.Bytes(), false, removed, err
}

func redact(out *bytes.Buffer, raw json.RawMessage, path string, restricted []string) (int, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		out.Write(raw)
		return 0, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	open, err := dec.Token()
	if err != nil {
		return 0, err
	}
	removed, first := 0, true
	isObject, closing := open == json.Delim('{'), byte(']')
	if isObject {
		closing = '}'
	}
	out.WriteByte(raw[0])
	for dec.More() {
		child := path
		var key string
		if isObject {
			t, err := dec.Token()
			if err != nil {
				return 0, err
			}
			key, _ = t.(string)
			child = strings.TrimPrefix(path+"."+key, ".")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, err
		}
		if isObject && hides(restricted, key, child) {
			removed++
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		if isObject {
			k, _ := json.Marshal(key)
			out.Write(k)
			out.WriteByte(':')
		}
		n, err := redact(out, v, child, restricted)
		if err != nil {
			return 0, err
		}
		removed += n
	}
	out.WriteByte(closing)
	return removed, nil
}

// hides reports whether a member named key at path is restricted.
func hides(restricted []string, key, path string) bool {
	for _, r := range restricted {
		if r == path || (!strings.Contains(r, ".") && r == key) {
			return true
		}
	}
	return false
}
