package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// StringList is a []string stored as a JSON text column on every database.
type StringList []string

// Value implements driver.Valuer.
func (l StringList) Value() (driver.Value, error) {
	if l == nil {
		l = StringList{}
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan implements sql.Scanner.
func (l *StringList) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		return json.Unmarshal([]byte(v), (*[]string)(l))
	case []byte:
		return json.Unmarshal(v, (*[]string)(l))
	}
	return fmt.Errorf("StringList: cannot scan %T", src)
}

// Contains reports whether s is in the list.
func (l StringList) Contains(s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}
