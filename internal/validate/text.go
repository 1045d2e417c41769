package validate

import (
	"strings"
	"unicode/utf8"

	"github.com/assent-hq/assent/internal/apperr"
)

// Text refuses what no column can hold, naming field: a NUL character
// (PostgreSQL's text and jsonb refuse it, SQLite would keep it) and bytes
// that are not UTF-8.
func Text(field, s string) error {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return apperr.Field(apperr.InvalidRequest, field, "%s must not contain a NUL character (\\u0000)", field)
	case !utf8.ValidString(s):
		return apperr.Field(apperr.InvalidRequest, field, "%s must be UTF-8 text", field)
	}
	return nil
}
