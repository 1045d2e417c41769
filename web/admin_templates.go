package web

import "fmt"

// The admin pages' shared parts (templates/admin_parts.html) take several
// arguments, and a template call passes only one value, so the pages build
// it with dict and list.

// init adds the admin helpers to funcs. New parses every page, the admin
// pages among them, with funcs before parseAdminPages parses them again, so
// the helpers have to be there from the start.
func init() {
	funcs["dict"] = dict
	funcs["list"] = list
}

// dict makes a map of its arguments, taken in key, value pairs, so a
// template can hand a part named arguments:
// {{template "admin-field" (dict "ID" "email" "Label" "Email address")}}.
func dict(pairs ...any) (map[string]any, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("dict: %d arguments, want key and value pairs", len(pairs))
	}
	m := make(map[string]any, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		k, ok := pairs[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is a %T, want a string", pairs[i], pairs[i])
		}
		m[k] = pairs[i+1]
	}
	return m, nil
}

// list makes a slice of its arguments, such as a table's column headings.
func list(items ...any) []any { return items }
