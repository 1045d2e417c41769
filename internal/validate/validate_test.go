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

// Common is a struct other inputs embed.
type Common struct {
	Title string `json:"title" validate:"required"`
	Inner struct {
		Name string `json:"name" validate:"max=2"`
	} `json:"inner"`
}

// TestEmbeddedFieldsAreTheOuterStructs: a field of an embedded struct is
// named as encoding/json reads it, on the outer struct, with no Go type
// name in its path.
func TestEmbeddedFieldsAreTheOuterStructs(t *testing.T) {
	type input struct {
		Common
		Note string `json:"note"`
	}
	e, ok := apperr.As(Struct(&input{}))
	if assert.True(t, ok) {
		assert.Equal(t, "title", e.Field)
		assert.Equal(t, "title is required", e.Message)
	}
	in := input{Common: Common{Title: "t"}}
	in.Inner.Name = "long"
	e, ok = apperr.As(Struct(&in))
	if assert.True(t, ok) {
		assert.Equal(t, "inner.name", e.Field)
	}
}
