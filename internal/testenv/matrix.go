package testenv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Outcome is one principal's expected status in an authorisation matrix:
// on a fresh resource, and after the row's first allowed principal has
// acted on it ("200/409"; the same twice when one is given).
type Outcome struct{ Fresh, After int }

// ParseWant reads an authorisation matrix row's want, such as
// "anon=401 members=200 owner=200/409": every principal is named exactly
// once, on its own or through one of groups, and one named on its own
// overrides its group. The API's and the pages' matrices share it.
func ParseWant(s string, principals []string, groups map[string][]string) (map[string]Outcome, error) {
	out := map[string]Outcome{}
	direct := map[string]bool{}
	for _, pass := range []string{"groups", "principals"} {
		for _, f := range strings.Fields(s) {
			name, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("%q is not name=status", f)
			}
			group, isGroup := groups[name]
			if (pass == "groups") != isGroup {
				continue
			}
			if !isGroup {
				if !slices.Contains(principals, name) {
					return nil, fmt.Errorf("unknown principal %q", name)
				}
				if direct[name] {
					return nil, fmt.Errorf("%s is named twice", name)
				}
				direct[name] = true
				group = []string{name}
			}
			o, err := parseOutcome(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			for _, p := range group {
				if _, set := out[p]; set && isGroup {
					return nil, fmt.Errorf("%s is in two groups", p)
				}
				out[p] = o
			}
		}
	}
	for _, p := range principals {
		if _, ok := out[p]; !ok {
			return nil, fmt.Errorf("no status for %s", p)
		}
	}
	return out, nil
}

func parseOutcome(v string) (Outcome, error) {
	fresh, after, twice := strings.Cut(v, "/")
	var o Outcome
	var err error
	if o.Fresh, err = strconv.Atoi(fresh); err != nil {
		return o, fmt.Errorf("bad status %q", v)
	}
	o.After = o.Fresh
	if twice {
		if o.After, err = strconv.Atoi(after); err != nil {
			return o, fmt.Errorf("bad status %q", v)
		}
	}
	return o, nil
}

// CheckCoverage fails t for every served route ("METHOD /path") that has
// no row in the matrix named table, and for every row naming a route that
// is not served.
func CheckCoverage(t testing.TB, served []string, rows map[string]bool, table string) {
	t.Helper()
	isServed := map[string]bool{}
	for _, name := range served {
		isServed[name] = true
		if !rows[name] {
			t.Errorf("%s is served but has no row in %s", name, table)
		}
	}
	for name := range rows {
		if !isServed[name] {
			t.Errorf("%s has a row for %s, which is not served", table, name)
		}
	}
}
