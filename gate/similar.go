package gate

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// similarMaxText is the longest string SimilarCondition holds to its
// value: a longer one (or one with a line break) is prose, which a
// request like this one would not repeat word for word.
const similarMaxText = 100

// SimilarCondition is the condition a mandate granted from an approval
// page starts with, covering requests like the one approved: each flat
// field of input, in its order, as it is there (a string or a boolean
// equal to it, a number at most it), joined with &&. Objects, arrays,
// nulls and prose are left out. The person narrows it before granting,
// and GrantFrom holds it to the approval's input. An input with no such
// field gives "", which holds for any input.
func SimilarCondition(input []byte) string {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	var terms []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return strings.Join(terms, " && ")
		}
		name, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return strings.Join(terms, " && ")
		}
		field := celField(name)
		switch v := v.(type) {
		case string:
			if utf8.RuneCountInString(v) <= similarMaxText && !strings.ContainsAny(v, "\r\n") {
				terms = append(terms, field+" == "+strconv.Quote(v))
			}
		case bool:
			terms = append(terms, field+" == "+strconv.FormatBool(v))
		case json.Number:
			terms = append(terms, field+" <= "+celNumber(v))
		}
	}
	return strings.Join(terms, " && ")
}

// celIdent is a name CEL reads after a dot; celReserved are those of its
// form CEL keeps for itself.
var celIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

var celReserved = map[string]bool{"as": true, "break": true, "const": true, "continue": true, "else": true, "false": true,
	"for": true, "function": true, "if": true, "import": true, "in": true, "let": true, "loop": true, "package": true,
	"namespace": true, "null": true, "return": true, "true": true, "var": true, "void": true, "while": true}

// celField is input's field name in CEL: input.name, or input["name"]
// for a name CEL cannot read after a dot.
func celField(name string) string {
	if celIdent.MatchString(name) && !celReserved[name] {
		return "input." + name
	}
	return "input[" + strconv.Quote(name) + "]"
}

// celNumber writes a JSON number as a CEL literal: as typed, unless it is
// a whole number too large for CEL's integers, which is written as the
// double the input holds.
func celNumber(n json.Number) string {
	s := n.String()
	if strings.ContainsAny(s, ".eE") {
		return s
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	f, _ := n.Float64()
	return strconv.FormatFloat(f, 'e', -1, 64)
}
