package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assent-hq/assent/internal/apperr"
)

// TestEntriesInWords: a count of one is "1 entry".
func TestEntriesInWords(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{&struct {
			Scopes []string `json:"scopes" validate:"min=1"`
		}{Scopes: []string{}}, "scopes must have at least 1 entry"},
		{&struct {
			Tags []string `json:"tags" validate:"min=2"`
		}{Tags: []string{"a"}}, "tags must have at least 2 entries"},
		{&struct {
			Tags []string `json:"tags" validate:"max=1"`
		}{Tags: []string{"a", "b"}}, "tags may have at most 1 entry"},
	} {
		e, ok := apperr.As(Struct(c.in))
		if assert.True(t, ok) {
			assert.Equal(t, c.want, e.Message)
		}
	}
}
