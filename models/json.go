package models

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// JSON stores a value as JSON text, the same on every database.
type JSON[T any] struct{ V T }

// Value implements driver.Valuer.
func (j JSON[T]) Value() (driver.Value, error) {
	b, err := json.Marshal(j.V)
	return string(b), err
}

// Scan implements sql.Scanner.
func (j *JSON[T]) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil || b == nil {
		return err
	}
	return json.Unmarshal(b, &j.V)
}

// RawJSON keeps a caller's JSON document byte for byte, so it is returned
// unchanged. Nil is stored as NULL.
type RawJSON []byte

// Value implements driver.Valuer.
func (r RawJSON) Value() (driver.Value, error) {
	if r == nil {
		return nil, nil
	}
	return string(r), nil
}

// Scan implements sql.Scanner.
func (r *RawJSON) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil {
		return err
	}
	*r = b
	return nil
}

// MarshalJSON writes the stored document, or null.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(bytes.TrimSpace(r)) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

func scanBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	case []byte:
		return append([]byte(nil), v...), nil
	}
	return nil, fmt.Errorf("cannot scan %T as JSON", src)
}
