package testenv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseWant(t *testing.T) {
	principals := []string{"anon", "owner", "member"}
	groups := map[string][]string{"members": {"owner", "member"}}
	got, err := ParseWant("anon=401 members=200 owner=200/409", principals, groups)
	require.NoError(t, err)
	assert.Equal(t, map[string]Outcome{"anon": {401, 401}, "owner": {200, 409}, "member": {200, 200}}, got)
	for _, bad := range []string{
		"anon=401 owner=200",                // member has none
		"anon=401 members=200 anon=401",     // named twice
		"anon members=200",                  // not name=status
		"anon=4o1 members=200",              // not a status
		"anon=401 members=200/x",            // not a second status
		"anon=401 members=200 stranger=200", // unknown
	} {
		_, err := ParseWant(bad, principals, groups)
		assert.Error(t, err, bad)
	}
}

// recorder keeps what CheckCoverage reports instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestCheckCoverage(t *testing.T) {
	r := &recorder{TB: t}
	CheckCoverage(r, []string{"GET /a", "POST /b"}, map[string]bool{"GET /a": true, "GET /gone": true}, "the matrix")
	assert.ElementsMatch(t, []string{"POST /b is served but has no row in the matrix", "the matrix has a row for GET /gone, which is not served"}, r.errs)
}
