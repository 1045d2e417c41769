// Package canonjson writes JSON in one canonical form, what the audit
// chain hashes and evidence signatures cover: object keys sorted, no
// spaces, no HTML escaping, numbers exactly as written.
package canonjson

import (
	"bytes"
	"encoding/json"
)

// Encode writes v without spaces or HTML escaping. A map's keys come out
// sorted, so a value made of maps, strings and numbers is canonical as
// it is; a struct's fields come out in their order (use Marshal).
func Encode(v any) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// Marshal is any v in canonical form.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Canonical(b)
}

// Canonical rewrites a JSON document in canonical form.
func Canonical(doc []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var generic any
	if err := d.Decode(&generic); err != nil {
		return nil, err
	}
	return Encode(generic)
}
