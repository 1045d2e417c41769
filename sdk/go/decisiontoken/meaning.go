package decisiontoken

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// MaxExactInteger is 2^53, the largest magnitude up to which a double holds
// every integer: beyond it the canonical hash reads a number as the double
// it rounds to, while an executor reading an int64 or a decimal reads
// another (9007199254740993 and 9007199254740992 hash alike).
const MaxExactInteger = 1 << 53

// ErrAmbiguous: the input may mean one thing to its hash and another to
// an executor. Verify reports it beside ErrInput; see CheckMeaning.
var ErrAmbiguous = errors.New("decisiontoken: the input may mean something else to an executor")

// AmbiguityError names where an input has more than one meaning.
type AmbiguityError struct {
	// Path is where, as the API names fields ("Amount", "lines[1].Sku");
	// empty for the input itself.
	Path string
	// Problem is what is wrong there, a sentence's end after the path.
	Problem string
}

func (e *AmbiguityError) Error() string {
	if e.Path == "" {
		return "the input " + e.Problem
	}
	return e.Path + " " + e.Problem
}

// Unwrap makes errors.Is(err, ErrAmbiguous) hold.
func (e *AmbiguityError) Unwrap() error { return ErrAmbiguous }

// CheckMeaning refuses JSON whose meaning depends on who reads it, with an
// *AmbiguityError naming the first place:
//   - an object holding two keys equal under Unicode simple case folding
//     (strings.EqualFold: "amount" and "Amount", "s" and "ſ", "k" and the
//     Kelvin sign), at any depth: Go's encoding/json and .NET match keys
//     without regard to case, the last one winning, while the hash, rules
//     and budgets read the key as written;
//   - a number whose magnitude is beyond 2^53 (MaxExactInteger), however
//     written: the hash reads it as the double it rounds to. Send big ids
//     as strings.
//
// JSON that is not well formed is not its concern: the hash refuses it.
func CheckMeaning(input []byte) error {
	return checkMeaning(input, true)
}

// CheckKeys is CheckMeaning's rule on keys alone, for a JSON document
// kept as written and bound by no hash, whose numbers a reader may take
// exactly (a report's dataset).
func CheckKeys(doc []byte) error {
	return checkMeaning(doc, false)
}

func checkMeaning(doc []byte, numbers bool) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	err := meaningOf(dec, "", numbers)
	var ambiguous *AmbiguityError
	if errors.As(err, &ambiguous) {
		return err
	}
	return nil
}

// meaningOf checks the next value of dec, which path names.
func meaningOf(dec *json.Decoder, path string, numbers bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Number:
		if numbers && beyondExact(t.String()) {
			return &AmbiguityError{Path: path, Problem: fmt.Sprintf("is %s, beyond ±2^53 (%d), where a double no longer holds every integer, so it would be hashed as another number: send big ids and amounts as strings",
				t, int64(MaxExactInteger))}
		}
	case json.Delim:
		switch t {
		case '[':
			for i := 0; dec.More(); i++ {
				if err := meaningOf(dec, fmt.Sprintf("%s[%d]", path, i), numbers); err != nil {
					return err
				}
			}
		case '{':
			seen := map[string]string{} // folded key → the key as written
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := tok.(string)
				at := key
				if path != "" {
					at = path + "." + key
				}
				folded := foldKey(key)
				if first, ok := seen[folded]; ok {
					return &AmbiguityError{Path: at, Problem: fmt.Sprintf("differs from %q only by case: keys equal without regard to case mean one field to many executors (Go, .NET) and two to Assent, so one object may hold only one of them",
						first)}
				}
				seen[folded] = key
				if err := meaningOf(dec, at, numbers); err != nil {
					return err
				}
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return err
		}
	}
	return nil
}

// foldKey is s with every rune replaced by the least rune of its simple
// case folding orbit: two keys have the same foldKey exactly when
// strings.EqualFold holds for them.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// beyondExact reports whether the JSON number text has a magnitude beyond
// 2^53, exactly: 9007199254740993 rounds to 2^53 as a double, so the
// double alone cannot tell.
func beyondExact(text string) bool {
	f, _ := strconv.ParseFloat(text, 64) // beyond a double's range: ±Inf
	if math.Abs(f) > MaxExactInteger {
		return true
	}
	if math.Abs(f) < MaxExactInteger {
		return false
	}
	exact, ok := new(big.Rat).SetString(text)
	return !ok || exact.Abs(exact).Cmp(new(big.Rat).SetInt64(MaxExactInteger)) > 0
}
